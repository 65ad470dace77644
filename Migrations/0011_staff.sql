-- Clinic staff (issue 14): accounts with a role scoped to one clinic, their sessions, and
-- two more appointment statuses for the clinic's day: 'arrived' (checked in) and
-- 'in_progress' (the doctor started). Both still hold their slot, so the partial unique
-- indexes count them as active. SQLite cannot change a CHECK in place: appointments and
-- appointment_events are rebuilt (the history is kept aside first, so that dropping the old
-- appointments table cascades into nothing). appointment_events.staff_id names the staff
-- account that made a change ('staff' rows before this migration have none).

-- migrate:up
CREATE TEMP TABLE saved_events AS SELECT * FROM appointment_events;
DROP TABLE appointment_events;

CREATE TABLE appointments_new (
    id INTEGER PRIMARY KEY,
    client_id INTEGER REFERENCES clients (id) ON DELETE SET NULL,
    clinic_id INTEGER NOT NULL REFERENCES clinics (id),
    department_id INTEGER NOT NULL REFERENCES departments (id),
    doctor_id INTEGER NOT NULL REFERENCES doctors (id),
    doctor_name TEXT NOT NULL,
    starts_at INTEGER NOT NULL,
    ends_at INTEGER NOT NULL CHECK (ends_at > starts_at),
    status TEXT NOT NULL DEFAULT 'scheduled'
        CHECK (status IN ('scheduled', 'confirmed', 'arrived', 'in_progress', 'completed', 'cancelled', 'no_show')),
    notes TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
INSERT INTO appointments_new SELECT id, client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at,
    status, notes, created_at, updated_at FROM appointments;
DROP TABLE appointments;
ALTER TABLE appointments_new RENAME TO appointments;
CREATE UNIQUE INDEX appointments_doctor_slot ON appointments (doctor_id, starts_at)
    WHERE status IN ('scheduled', 'confirmed', 'arrived', 'in_progress');
CREATE UNIQUE INDEX appointments_client_slot ON appointments (client_id, starts_at)
    WHERE status IN ('scheduled', 'confirmed', 'arrived', 'in_progress') AND client_id IS NOT NULL;
CREATE INDEX appointments_client ON appointments (client_id, starts_at);
CREATE INDEX appointments_clinic_day ON appointments (clinic_id, starts_at);

CREATE TABLE staff_accounts (
    id INTEGER PRIMARY KEY,
    login TEXT NOT NULL,
    login_key TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    name TEXT NOT NULL CHECK (length(trim(name)) > 0),
    surname TEXT NOT NULL CHECK (length(trim(surname)) > 0),
    role TEXT NOT NULL CHECK (role IN ('clinic-admin', 'receptionist', 'doctor')),
    clinic_id INTEGER NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    -- A doctor account is one doctor of that clinic; NULL for the other roles.
    doctor_id INTEGER REFERENCES doctors (id) ON DELETE SET NULL,
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
    created_at INTEGER NOT NULL,
    CHECK ((role = 'doctor') = (doctor_id IS NOT NULL) OR (role = 'doctor' AND is_active = 0))
);
CREATE INDEX staff_accounts_clinic ON staff_accounts (clinic_id);

CREATE TABLE staff_sessions (
    id INTEGER PRIMARY KEY,
    staff_id INTEGER NOT NULL REFERENCES staff_accounts (id) ON DELETE CASCADE,
    -- SHA-256 of the token, hex; the token itself is never stored.
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL
);
CREATE INDEX staff_sessions_staff ON staff_sessions (staff_id);

CREATE TABLE appointment_events (
    id INTEGER PRIMARY KEY,
    appointment_id INTEGER NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    -- 'booked', 'rescheduled', or the status it moved to.
    event TEXT NOT NULL CHECK (event IN ('booked', 'rescheduled', 'confirmed', 'arrived', 'in_progress', 'completed',
                                         'cancelled', 'no_show')),
    -- Who did it: 'patient' or 'staff' (the operator's changes are 'staff' with no staff_id).
    actor TEXT NOT NULL CHECK (actor IN ('patient', 'staff')),
    at INTEGER NOT NULL,
    -- For 'booked' and 'rescheduled': the slot, UTC seconds.
    starts_at INTEGER,
    doctor_id INTEGER,
    reason TEXT,
    staff_id INTEGER REFERENCES staff_accounts (id) ON DELETE SET NULL
);
INSERT INTO appointment_events (id, appointment_id, event, actor, at, starts_at, doctor_id, reason)
    SELECT id, appointment_id, event, actor, at, starts_at, doctor_id, reason FROM saved_events;
DROP TABLE saved_events;
CREATE INDEX appointment_events_appointment ON appointment_events (appointment_id, id);

-- migrate:down
CREATE TEMP TABLE saved_events AS SELECT * FROM appointment_events;
DROP TABLE appointment_events;
DROP TABLE staff_sessions;
DROP TABLE staff_accounts;

CREATE TABLE appointments_old (
    id INTEGER PRIMARY KEY,
    client_id INTEGER REFERENCES clients (id) ON DELETE SET NULL,
    clinic_id INTEGER NOT NULL REFERENCES clinics (id),
    department_id INTEGER NOT NULL REFERENCES departments (id),
    doctor_id INTEGER NOT NULL REFERENCES doctors (id),
    doctor_name TEXT NOT NULL,
    starts_at INTEGER NOT NULL,
    ends_at INTEGER NOT NULL CHECK (ends_at > starts_at),
    status TEXT NOT NULL DEFAULT 'scheduled'
        CHECK (status IN ('scheduled', 'confirmed', 'completed', 'cancelled', 'no_show')),
    notes TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
-- Checked in or started: confirmed, the nearest status before this migration.
INSERT INTO appointments_old SELECT id, client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at,
    CASE WHEN status IN ('arrived', 'in_progress') THEN 'confirmed' ELSE status END, notes, created_at, updated_at
    FROM appointments;
DROP TABLE appointments;
ALTER TABLE appointments_old RENAME TO appointments;
CREATE UNIQUE INDEX appointments_doctor_slot ON appointments (doctor_id, starts_at)
    WHERE status IN ('scheduled', 'confirmed');
CREATE UNIQUE INDEX appointments_client_slot ON appointments (client_id, starts_at)
    WHERE status IN ('scheduled', 'confirmed') AND client_id IS NOT NULL;
CREATE INDEX appointments_client ON appointments (client_id, starts_at);

CREATE TABLE appointment_events (
    id INTEGER PRIMARY KEY,
    appointment_id INTEGER NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    event TEXT NOT NULL CHECK (event IN ('booked', 'rescheduled', 'confirmed', 'completed', 'cancelled', 'no_show')),
    actor TEXT NOT NULL CHECK (actor IN ('patient', 'staff')),
    at INTEGER NOT NULL,
    starts_at INTEGER,
    doctor_id INTEGER,
    reason TEXT
);
INSERT INTO appointment_events (id, appointment_id, event, actor, at, starts_at, doctor_id, reason)
    SELECT id, appointment_id, event, actor, at, starts_at, doctor_id, reason FROM saved_events
    WHERE event NOT IN ('arrived', 'in_progress');
DROP TABLE saved_events;
CREATE INDEX appointment_events_appointment ON appointment_events (appointment_id, id);
