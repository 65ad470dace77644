-- Ids that never come back (issue 23). A deleted patient's id was given to the next patient to
-- register, and the rows that keep a patient's id after the account is gone (the audit trail,
-- kept whole for its chain) then read as the newcomer's: their access log showed the deleted
-- patient's messages and reads. clients, messages and deliveries (the rows a deleted account
-- takes with it, and that other rows and e-mail Message-IDs name) are rebuilt with
-- AUTOINCREMENT, whose sequence only grows, and each sequence starts above every id the
-- database still mentions: the audit trail remembers the ids of patients deleted before this
-- migration. The runner applies migrations with foreign keys off and checks them before it
-- commits (SQLite's way to rebuild a table), so dropping the old clients table cascades into
-- nothing. messages.kind gains 'account': notices about the account itself (the private
-- calendar address was renewed after a password change).

-- migrate:up
CREATE TABLE clients_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    login TEXT NOT NULL,
    login_key TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    surname TEXT NOT NULL,
    street TEXT NOT NULL,
    house TEXT NOT NULL,
    city TEXT NOT NULL,
    lat REAL CHECK (lat IS NULL OR lat BETWEEN -90 AND 90),
    lon REAL CHECK (lon IS NULL OR lon BETWEEN -180 AND 180),
    home_clinic_id INTEGER REFERENCES clinics (id) ON DELETE SET NULL,
    preferred_language TEXT NOT NULL DEFAULT 'en' CHECK (preferred_language IN ('en', 'ru')),
    privacy_accepted_at INTEGER,
    privacy_version INTEGER,
    created_at INTEGER NOT NULL,
    personal BLOB,
    email_confirmed INTEGER NOT NULL DEFAULT 0 CHECK (email_confirmed IN (0, 1))
);
-- Left over from an earlier up and down: the sequences below start again from what is here.
DELETE FROM sqlite_sequence WHERE name IN ('clients', 'messages', 'deliveries');
INSERT INTO clients_new (id, login, login_key, password_hash, name, surname, street, house, city, lat, lon, home_clinic_id,
                         preferred_language, privacy_accepted_at, privacy_version, created_at, personal, email_confirmed)
    SELECT id, login, login_key, password_hash, name, surname, street, house, city, lat, lon, home_clinic_id,
           preferred_language, privacy_accepted_at, privacy_version, created_at, personal, email_confirmed FROM clients;
DROP TABLE clients;
ALTER TABLE clients_new RENAME TO clients;

CREATE TABLE messages_new (
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
INSERT INTO messages_new (id, client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, read_at, dedupe_key)
    SELECT id, client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, read_at, dedupe_key FROM messages;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_client ON messages (client_id, id);
CREATE UNIQUE INDEX messages_dedupe ON messages (dedupe_key) WHERE dedupe_key IS NOT NULL;

CREATE TABLE deliveries_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO deliveries_new (id, client_id, message_id, purpose, payload, created_at, next_attempt_at, attempts, state, sent_at,
                            reply, last_error)
    SELECT id, client_id, message_id, purpose, payload, created_at, next_attempt_at, attempts, state, sent_at, reply, last_error
    FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);

-- Each sequence above every id the database still names.
INSERT INTO sqlite_sequence (name, seq) SELECT t.name, 0 FROM (SELECT 'clients' AS name UNION ALL SELECT 'messages'
    UNION ALL SELECT 'deliveries') AS t WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence s WHERE s.name = t.name);
UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(client_id), 0) FROM audit_events)) WHERE name = 'clients';

-- migrate:down
CREATE TABLE clients_old (
    id INTEGER PRIMARY KEY,
    login TEXT NOT NULL,
    login_key TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    surname TEXT NOT NULL,
    street TEXT NOT NULL,
    house TEXT NOT NULL,
    city TEXT NOT NULL,
    lat REAL CHECK (lat IS NULL OR lat BETWEEN -90 AND 90),
    lon REAL CHECK (lon IS NULL OR lon BETWEEN -180 AND 180),
    home_clinic_id INTEGER REFERENCES clinics (id) ON DELETE SET NULL,
    preferred_language TEXT NOT NULL DEFAULT 'en' CHECK (preferred_language IN ('en', 'ru')),
    privacy_accepted_at INTEGER,
    privacy_version INTEGER,
    created_at INTEGER NOT NULL,
    personal BLOB,
    email_confirmed INTEGER NOT NULL DEFAULT 0 CHECK (email_confirmed IN (0, 1))
);
INSERT INTO clients_old (id, login, login_key, password_hash, name, surname, street, house, city, lat, lon, home_clinic_id,
                         preferred_language, privacy_accepted_at, privacy_version, created_at, personal, email_confirmed)
    SELECT id, login, login_key, password_hash, name, surname, street, house, city, lat, lon, home_clinic_id,
           preferred_language, privacy_accepted_at, privacy_version, created_at, personal, email_confirmed FROM clients;
DROP TABLE clients;
ALTER TABLE clients_old RENAME TO clients;

CREATE TABLE messages_old (
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
-- An account notice reads as a message from the clinic side in the older schema.
INSERT INTO messages_old (id, client_id, kind, appointment_id, clinic_id, staff_id, subject, body, created_at, read_at, dedupe_key)
    SELECT id, client_id, CASE kind WHEN 'account' THEN 'clinic' ELSE kind END, appointment_id, clinic_id, staff_id, subject,
           body, created_at, read_at, dedupe_key FROM messages;
DROP TABLE messages;
ALTER TABLE messages_old RENAME TO messages;
CREATE INDEX messages_client ON messages (client_id, id);
CREATE UNIQUE INDEX messages_dedupe ON messages (dedupe_key) WHERE dedupe_key IS NOT NULL;

CREATE TABLE deliveries_old (
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
INSERT INTO deliveries_old (id, client_id, message_id, purpose, payload, created_at, next_attempt_at, attempts, state, sent_at,
                            reply, last_error)
    SELECT id, client_id, message_id, purpose, payload, created_at, next_attempt_at, attempts, state, sent_at, reply, last_error
    FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_old RENAME TO deliveries;
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);
