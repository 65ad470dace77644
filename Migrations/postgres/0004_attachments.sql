-- Documents and conversations on appointments (issue 28; Migrations/0016_attachments.sql says
-- what each table holds and how it is sealed). Chunks are bytea rows of at most 256 KiB, so a
-- file is written and read a chunk at a time and never held whole by the driver.
-- migrate:up
CREATE TABLE attachments (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    appointment_id bigint NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    author text NOT NULL CHECK (author IN ('patient', 'staff')),
    staff_id bigint REFERENCES staff_accounts (id) ON DELETE SET NULL,
    content_type text NOT NULL,
    size bigint NOT NULL CHECK (size > 0),
    width integer,
    height integer,
    thumbnail_size integer NOT NULL DEFAULT 0,
    chunk_size integer NOT NULL CHECK (chunk_size > 0),
    meta bytea,
    created_at timestamptz NOT NULL
);
CREATE INDEX attachments_appointment ON attachments (appointment_id);
CREATE INDEX attachments_client ON attachments (client_id);

CREATE TABLE attachment_chunks (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    attachment_id bigint NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
    part smallint NOT NULL CHECK (part IN (0, 1)),
    idx integer NOT NULL CHECK (idx >= 0),
    data bytea NOT NULL,
    UNIQUE (attachment_id, part, idx)
);

CREATE TABLE threads (
    appointment_id bigint PRIMARY KEY REFERENCES appointments (id) ON DELETE CASCADE,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    clinic_id bigint NOT NULL,
    state text NOT NULL CHECK (state IN ('open', 'closed')),
    patient_unread integer NOT NULL DEFAULT 0,
    staff_unread integer NOT NULL DEFAULT 0,
    last_at timestamptz NOT NULL
);
CREATE INDEX threads_clinic ON threads (clinic_id, state, last_at);
CREATE INDEX threads_client ON threads (client_id);

CREATE TABLE thread_messages (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    appointment_id bigint NOT NULL REFERENCES threads (appointment_id) ON DELETE CASCADE,
    author text NOT NULL CHECK (author IN ('patient', 'staff')),
    staff_id bigint REFERENCES staff_accounts (id) ON DELETE SET NULL,
    body bytea NOT NULL,
    attachment_id bigint REFERENCES attachments (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX thread_messages_thread ON thread_messages (appointment_id, id);

-- migrate:down
DROP TABLE thread_messages;
DROP TABLE threads;
DROP TABLE attachment_chunks;
DROP TABLE attachments;
