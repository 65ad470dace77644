-- The audit trail (issue 14): every read of a patient's personal fields by staff and every
-- change made by staff or by the operator, appended in the transaction of what it records.
-- Each row's hash is SHA-256 over the previous row's hash and its own fields, so a row
-- edited, deleted or moved breaks the chain from there on (`clinic admin check`); the head
-- (last id and hash) is kept apart, so that cutting the tail shows too. Triggers refuse
-- UPDATE and DELETE; a file edited around them is what the chain is for.
-- client_id, clinic_id and staff_id have no foreign keys: the trail outlives a deleted
-- account, and holds no personal fields of its own.

-- migrate:up
CREATE TABLE audit_events (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    actor TEXT NOT NULL CHECK (actor IN ('operator', 'staff')),
    staff_id INTEGER,
    role TEXT NOT NULL CHECK (role IN ('operator', 'clinic-admin', 'receptionist', 'doctor')),
    clinic_id INTEGER,
    action TEXT NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
    client_id INTEGER,
    appointment_id INTEGER,
    request_id TEXT,
    detail TEXT NOT NULL DEFAULT '',
    hash TEXT NOT NULL CHECK (length(hash) = 64)
);
CREATE INDEX audit_events_client ON audit_events (client_id, id);
CREATE INDEX audit_events_at ON audit_events (at);
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;

CREATE TABLE audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_id INTEGER NOT NULL,
    hash TEXT NOT NULL CHECK (length(hash) = 64)
);

-- migrate:down
DROP TABLE audit_head;
DROP TRIGGER audit_events_no_delete;
DROP TRIGGER audit_events_no_update;
DROP INDEX audit_events_at;
DROP INDEX audit_events_client;
DROP TABLE audit_events;
