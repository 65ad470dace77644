-- The HTTP API (clinic serve): which device a session was opened on, so that a patient can
-- see their signed-in devices and sign one out; and the responses kept for idempotent retries
-- of bookings, reschedules and cancellations (a key lives 24 hours).

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

-- migrate:down
DROP TABLE idempotency_keys;
ALTER TABLE sessions DROP COLUMN device_app_version;
ALTER TABLE sessions DROP COLUMN device_platform;
ALTER TABLE sessions DROP COLUMN device_name;
