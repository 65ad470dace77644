-- Messages, calendars and e-mail (issue 16). A patient's inbox: messages the system writes in
-- the transaction of the change that causes them (booked, rescheduled, cancelled, the clinic's
-- zone changed, a reminder) and messages clinic staff write. Each message is stored in the
-- patient's language at the time it was written. A reminder's `dedupe_key` (appointment,
-- start, lead) makes it once only. The outbox (`deliveries`) holds what is to be e-mailed: a
-- row per message for a patient with a confirmed address, and the codes that confirm an
-- address (sealed, like the profile). A calendar feed has its own read-only token, stored as a
-- hash for look-up and sealed for showing the address again.

-- migrate:up
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('booked', 'rescheduled', 'cancelled', 'clinic_cancelled', 'clinic_changed',
                                       'reminder', 'clinic')),
    appointment_id INTEGER,
    clinic_id INTEGER,
    staff_id INTEGER,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    read_at INTEGER,
    dedupe_key TEXT
);
CREATE INDEX messages_client ON messages (client_id, id);
-- Partial: a booking's message (no key) touches one index fewer.
CREATE UNIQUE INDEX messages_dedupe ON messages (dedupe_key) WHERE dedupe_key IS NOT NULL;

CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages (id) ON DELETE CASCADE,
    purpose TEXT NOT NULL CHECK (purpose IN ('message', 'email_code')),
    payload BLOB,
    created_at INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'dropped')),
    sent_at INTEGER,
    reply TEXT,
    last_error TEXT
);
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);

CREATE TABLE email_confirmations (
    client_id INTEGER PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE calendar_feeds (
    client_id INTEGER PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    token_sealed BLOB NOT NULL,
    created_at INTEGER NOT NULL
);

ALTER TABLE clients ADD COLUMN email_confirmed INTEGER NOT NULL DEFAULT 0 CHECK (email_confirmed IN (0, 1));

-- The reminders' scan: active appointments by start.
CREATE INDEX appointments_upcoming ON appointments (starts_at)
    WHERE status IN ('scheduled', 'confirmed', 'arrived', 'in_progress') AND client_id IS NOT NULL;

-- migrate:down
DROP INDEX appointments_upcoming;
ALTER TABLE clients DROP COLUMN email_confirmed;
DROP TABLE calendar_feeds;
DROP TABLE email_confirmations;
DROP INDEX deliveries_due;
DROP TABLE deliveries;
DROP INDEX messages_dedupe;
DROP INDEX messages_client;
DROP TABLE messages;
