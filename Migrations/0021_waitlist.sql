-- The waitlist (issue 45). A patient waits for a time at a department (any doctor or one),
-- within a window of days, optionally within hours of the day and on some weekdays, with a
-- visit type; or for a time earlier than one of their appointments (`before_appointment_id`).
-- One waiting entry per patient and department (`waitlist_entries_one_active`: joining twice
-- is refused by the index, whichever front or server writes).
--
-- A time that becomes free is queued by the trigger below (`waitlist_freed`), in the
-- transaction that frees it, whoever frees it (any front, the CLI, SQL by hand): a cancelled or
-- otherwise ended appointment, or one moved away from its time or doctor. Only when someone
-- waits at that department, so a clinic without a waitlist never fills the queue. The offering
-- rule (who is next, whether the time is still free for them) is ClinicKit's
-- (`WaitlistController`): it takes a queued time and offers it to the first waiting entry it
-- fits, in one transaction: the queue row deleted, a hold of the time for that patient
-- (`slot_holds.for_offer`, which the patient's own holds neither count nor release), the offer,
-- the entry marked `offered`, the patient's message. An entry has at most one open offer
-- (`waitlist_offers_one_open`) and is never offered one time twice (`waitlist_offers_once`).

-- migrate:up
CREATE TABLE waitlist_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    clinic_id INTEGER NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    department_id INTEGER NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    doctor_id INTEGER REFERENCES doctors (id) ON DELETE CASCADE,
    visit_type_id INTEGER,
    first_day TEXT NOT NULL,
    last_day TEXT NOT NULL CHECK (last_day >= first_day),
    from_minute INTEGER CHECK (from_minute BETWEEN 0 AND 1439),
    to_minute INTEGER CHECK (to_minute BETWEEN 1 AND 1440),
    weekdays INTEGER NOT NULL DEFAULT 127 CHECK (weekdays BETWEEN 1 AND 127),
    before_appointment_id INTEGER REFERENCES appointments (id) ON DELETE CASCADE,
    priority INTEGER NOT NULL DEFAULT 0,
    staff_id INTEGER,
    status TEXT NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'offered', 'booked', 'left')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    CHECK ((from_minute IS NULL) = (to_minute IS NULL) AND (from_minute IS NULL OR to_minute > from_minute))
);
CREATE UNIQUE INDEX waitlist_entries_one_active ON waitlist_entries (client_id, department_id)
    WHERE status IN ('waiting', 'offered');
CREATE INDEX waitlist_entries_waiting ON waitlist_entries (department_id, priority DESC, created_at, id)
    WHERE status = 'waiting';

CREATE TABLE waitlist_offers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id INTEGER NOT NULL REFERENCES waitlist_entries (id) ON DELETE CASCADE,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    hold_id INTEGER,
    clinic_id INTEGER NOT NULL,
    department_id INTEGER NOT NULL,
    doctor_id INTEGER NOT NULL REFERENCES doctors (id) ON DELETE CASCADE,
    starts_at INTEGER NOT NULL,
    ends_at INTEGER NOT NULL CHECK (ends_at > starts_at),
    expires_at INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'declined', 'lapsed', 'withdrawn')),
    appointment_id INTEGER,
    created_at INTEGER NOT NULL,
    closed_at INTEGER
);
CREATE UNIQUE INDEX waitlist_offers_one_open ON waitlist_offers (entry_id) WHERE status = 'open';
CREATE UNIQUE INDEX waitlist_offers_once ON waitlist_offers (entry_id, doctor_id, starts_at);
CREATE INDEX waitlist_offers_due ON waitlist_offers (expires_at) WHERE status = 'open';
CREATE INDEX waitlist_offers_client ON waitlist_offers (client_id, id);

CREATE TABLE waitlist_freed (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    department_id INTEGER NOT NULL,
    doctor_id INTEGER NOT NULL,
    starts_at INTEGER NOT NULL,
    ends_at INTEGER NOT NULL,
    freed_at INTEGER NOT NULL
);

ALTER TABLE slot_holds ADD COLUMN for_offer INTEGER NOT NULL DEFAULT 0 CHECK (for_offer IN (0, 1));

CREATE TRIGGER appointments_freed AFTER UPDATE OF status, starts_at, doctor_id ON appointments
WHEN OLD.status IN ('scheduled', 'confirmed', 'arrived', 'in_progress')
     AND (NEW.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress')
          OR NEW.starts_at <> OLD.starts_at OR NEW.doctor_id <> OLD.doctor_id)
BEGIN
    INSERT INTO waitlist_freed (department_id, doctor_id, starts_at, ends_at, freed_at)
    SELECT OLD.department_id, OLD.doctor_id, OLD.starts_at, OLD.ends_at, CAST(strftime('%s', 'now') AS INTEGER)
    WHERE EXISTS (SELECT 1 FROM waitlist_entries WHERE department_id = OLD.department_id AND status = 'waiting');
END;

-- messages.kind gains 'waitlist': a time offered from the waitlist (SQLite changes a CHECK by
-- rebuilding the table; the runner has foreign keys off, as for 0014).
CREATE TABLE messages_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('booked', 'rescheduled', 'cancelled', 'clinic_cancelled', 'clinic_changed',
                                       'reminder', 'clinic', 'account', 'waitlist')),
    appointment_id INTEGER,
    clinic_id INTEGER,
    staff_id INTEGER,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    read_at INTEGER,
    dedupe_key TEXT
);
INSERT INTO messages_new (id, client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, read_at, dedupe_key)
    SELECT id, client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, read_at, dedupe_key FROM messages;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_client ON messages (client_id, id);
CREATE UNIQUE INDEX messages_dedupe ON messages (dedupe_key) WHERE dedupe_key IS NOT NULL;

-- migrate:down
DELETE FROM deliveries WHERE message_id IN (SELECT id FROM messages WHERE kind = 'waitlist');
DELETE FROM messages WHERE kind = 'waitlist';
CREATE TABLE messages_old (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('booked', 'rescheduled', 'cancelled', 'clinic_cancelled', 'clinic_changed',
                                       'reminder', 'clinic', 'account')),
    appointment_id INTEGER,
    clinic_id INTEGER,
    staff_id INTEGER,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    read_at INTEGER,
    dedupe_key TEXT
);
INSERT INTO messages_old (id, client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, read_at, dedupe_key)
    SELECT id, client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, read_at, dedupe_key FROM messages;
DROP TABLE messages;
ALTER TABLE messages_old RENAME TO messages;
CREATE INDEX messages_client ON messages (client_id, id);
CREATE UNIQUE INDEX messages_dedupe ON messages (dedupe_key) WHERE dedupe_key IS NOT NULL;
DROP TRIGGER appointments_freed;
DELETE FROM slot_holds WHERE for_offer = 1;
ALTER TABLE slot_holds DROP COLUMN for_offer;
DROP TABLE waitlist_freed;
DROP TABLE waitlist_offers;
DROP TABLE waitlist_entries;
