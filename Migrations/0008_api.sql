-- The HTTP API (clinic serve): which device a session was opened on, so that a patient can
-- see their signed-in devices and sign one out; the responses kept for idempotent retries
-- of bookings, reschedules and cancellations (a key lives 24 hours); and a version of the
-- clinic directory for long-running processes.

-- migrate:up
ALTER TABLE sessions ADD COLUMN device_name TEXT;
ALTER TABLE sessions ADD COLUMN device_platform TEXT;
ALTER TABLE sessions ADD COLUMN device_app_version TEXT;

CREATE TABLE idempotency_keys (
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    -- The client's Idempotency-Key header, as sent.
    key TEXT NOT NULL,
    -- SHA-256 of the method, the route and the body: the same key with another request is refused.
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    body BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (client_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- A counter bumped by every change to the clinics a search reads, so that a long-running
-- server sees a directory imported by another process (its nearest-clinic index is rebuilt).
CREATE TABLE directory_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO directory_version (id, version) VALUES (1, 0);
CREATE TRIGGER clinics_inserted AFTER INSERT ON clinics
BEGIN UPDATE directory_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinics_deleted AFTER DELETE ON clinics
BEGIN UPDATE directory_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinics_moved AFTER UPDATE OF lat, lon, is_pediatric, is_hospital ON clinics
BEGIN UPDATE directory_version SET version = version + 1 WHERE id = 1; END;

-- migrate:down
DROP TRIGGER clinics_moved;
DROP TRIGGER clinics_deleted;
DROP TRIGGER clinics_inserted;
DROP TABLE directory_version;
DROP TABLE idempotency_keys;
ALTER TABLE sessions DROP COLUMN device_app_version;
ALTER TABLE sessions DROP COLUMN device_platform;
ALTER TABLE sessions DROP COLUMN device_name;
