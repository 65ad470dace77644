-- Documents and conversations on appointments (issue 28).
--
-- attachments: a file a patient (or the clinic's staff) attached to an appointment. Its bytes
-- are in attachment_chunks, each chunk sealed on its own under the personal-data key (context
-- "attachment:<id>:<part>:<index>", so a chunk moved to another place does not open); its name
-- and checksum are sealed in meta (context "attachment:<id>"). What stays in clear is what the
-- rules count and the lists show without opening anything: the type, the size, the picture's
-- size. Part 0 is the file, part 1 its thumbnail (photos only). A file goes with its patient's
-- account (client_id cascades), with its appointment, and when its author removes it; the
-- rows it leaves in the file's free pages are gone after a checkpoint and VACUUM
-- (`clinic admin vacuum`).
--
-- threads / thread_messages: one conversation per appointment between its patient and the
-- clinic's front desk. The text is sealed (context "thread:<appointment id>"). Each side has
-- its unread count; staff close a thread, the patient's next message opens it again.

-- migrate:up
CREATE TABLE attachments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    appointment_id INTEGER NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    author TEXT NOT NULL CHECK (author IN ('patient', 'staff')),
    staff_id INTEGER REFERENCES staff_accounts (id) ON DELETE SET NULL,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL CHECK (size > 0),
    width INTEGER,
    height INTEGER,
    thumbnail_size INTEGER NOT NULL DEFAULT 0,
    chunk_size INTEGER NOT NULL CHECK (chunk_size > 0),
    meta BLOB,
    created_at INTEGER NOT NULL
);
CREATE INDEX attachments_appointment ON attachments (appointment_id);
CREATE INDEX attachments_client ON attachments (client_id);

CREATE TABLE attachment_chunks (
    id INTEGER PRIMARY KEY,
    attachment_id INTEGER NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
    part INTEGER NOT NULL CHECK (part IN (0, 1)),
    idx INTEGER NOT NULL CHECK (idx >= 0),
    data BLOB NOT NULL,
    UNIQUE (attachment_id, part, idx)
);

CREATE TABLE threads (
    appointment_id INTEGER PRIMARY KEY REFERENCES appointments (id) ON DELETE CASCADE,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    clinic_id INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('open', 'closed')),
    patient_unread INTEGER NOT NULL DEFAULT 0,
    staff_unread INTEGER NOT NULL DEFAULT 0,
    last_at INTEGER NOT NULL
);
CREATE INDEX threads_clinic ON threads (clinic_id, state, last_at);
CREATE INDEX threads_client ON threads (client_id);

CREATE TABLE thread_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    appointment_id INTEGER NOT NULL REFERENCES threads (appointment_id) ON DELETE CASCADE,
    author TEXT NOT NULL CHECK (author IN ('patient', 'staff')),
    staff_id INTEGER REFERENCES staff_accounts (id) ON DELETE SET NULL,
    body BLOB NOT NULL,
    attachment_id INTEGER REFERENCES attachments (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX thread_messages_thread ON thread_messages (appointment_id, id);

-- migrate:down
DROP TABLE thread_messages;
DROP TABLE threads;
DROP TABLE attachment_chunks;
DROP TABLE attachments;
