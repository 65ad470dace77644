-- An undone check-in (issue 42): a check-in made by mistake goes back to 'scheduled' until the
-- visit starts (StaffAction.undoCheckIn), and the history records it as every status change
-- is, by the status it moved to. appointment_events.event had no 'scheduled' (a booking is
-- 'booked'); SQLite cannot change a CHECK in place, so the table is rebuilt, rows and ids kept.

-- migrate:up
CREATE TABLE appointment_events_new (
    id INTEGER PRIMARY KEY,
    appointment_id INTEGER NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    -- 'booked', 'rescheduled', or the status it moved to ('scheduled': a check-in undone).
    event TEXT NOT NULL CHECK (event IN ('booked', 'rescheduled', 'scheduled', 'confirmed', 'arrived', 'in_progress',
                                         'completed', 'cancelled', 'no_show')),
    -- Who did it: 'patient' or 'staff' (the operator's changes are 'staff' with no staff_id).
    actor TEXT NOT NULL CHECK (actor IN ('patient', 'staff')),
    at INTEGER NOT NULL,
    -- For 'booked' and 'rescheduled': the slot, UTC seconds.
    starts_at INTEGER,
    doctor_id INTEGER,
    reason TEXT,
    staff_id INTEGER REFERENCES staff_accounts (id) ON DELETE SET NULL
);
INSERT INTO appointment_events_new (id, appointment_id, event, actor, at, starts_at, doctor_id, reason, staff_id)
    SELECT id, appointment_id, event, actor, at, starts_at, doctor_id, reason, staff_id FROM appointment_events;
DROP TABLE appointment_events;
ALTER TABLE appointment_events_new RENAME TO appointment_events;
CREATE INDEX appointment_events_appointment ON appointment_events (appointment_id, id);

-- migrate:down
-- An undone check-in's row has no place in the older history (as 0011's down drops 'arrived').
CREATE TABLE appointment_events_old (
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
INSERT INTO appointment_events_old (id, appointment_id, event, actor, at, starts_at, doctor_id, reason, staff_id)
    SELECT id, appointment_id, event, actor, at, starts_at, doctor_id, reason, staff_id FROM appointment_events
    WHERE event <> 'scheduled';
DROP TABLE appointment_events;
ALTER TABLE appointment_events_old RENAME TO appointment_events;
CREATE INDEX appointment_events_appointment ON appointment_events (appointment_id, id);
