-- Scheduling: exceptions to a doctor's weekly hours on given dates, and the history of every
-- appointment (each status change and move, with its time).

-- migrate:up
CREATE TABLE working_exceptions (
    id INTEGER PRIMARY KEY,
    doctor_id INTEGER NOT NULL REFERENCES doctors (id) ON DELETE CASCADE,
    -- The clinic's local calendar day, 'YYYY-MM-DD'.
    day TEXT NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    -- NULL start and end: a day off. Otherwise these hours replace the weekly hours that day.
    start_minute INTEGER CHECK (start_minute BETWEEN 0 AND 1439),
    end_minute INTEGER CHECK (end_minute BETWEEN 1 AND 1440),
    slot_minutes INTEGER CHECK (slot_minutes BETWEEN 5 AND 480),
    CHECK ((start_minute IS NULL AND end_minute IS NULL AND slot_minutes IS NULL)
        OR (start_minute IS NOT NULL AND end_minute > start_minute AND slot_minutes IS NOT NULL))
);
CREATE INDEX working_exceptions_doctor_day ON working_exceptions (doctor_id, day);

CREATE TABLE appointment_events (
    id INTEGER PRIMARY KEY,
    appointment_id INTEGER NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    -- 'booked', 'rescheduled', or the status it moved to.
    event TEXT NOT NULL CHECK (event IN ('booked', 'rescheduled', 'confirmed', 'completed', 'cancelled', 'no_show')),
    -- Who did it: 'patient' or 'staff'.
    actor TEXT NOT NULL CHECK (actor IN ('patient', 'staff')),
    at INTEGER NOT NULL,
    -- For 'booked' and 'rescheduled': the slot, UTC seconds.
    starts_at INTEGER,
    doctor_id INTEGER
);
CREATE INDEX appointment_events_appointment ON appointment_events (appointment_id, id);

-- Appointments booked before this migration get their booking as history.
INSERT INTO appointment_events (appointment_id, event, actor, at, starts_at, doctor_id)
    SELECT id, 'booked', 'patient', created_at, starts_at, doctor_id FROM appointments;

-- migrate:down
DROP TABLE appointment_events;
DROP TABLE working_exceptions;
