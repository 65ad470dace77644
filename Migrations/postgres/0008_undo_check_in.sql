-- An undone check-in (issue 42): a check-in made by mistake goes back to 'scheduled' until the
-- visit starts (StaffAction.undoCheckIn), and the history records it as every status change
-- is, by the status it moved to; appointment_events.event had no 'scheduled' (a booking is
-- 'booked'). The SQLite store's 0019_undo_check_in.sql does the same.
-- migrate:up
ALTER TABLE appointment_events DROP CONSTRAINT appointment_events_event_check;
ALTER TABLE appointment_events ADD CONSTRAINT appointment_events_event_check
    CHECK (event IN ('booked', 'rescheduled', 'scheduled', 'confirmed', 'arrived', 'in_progress', 'completed', 'cancelled',
                     'no_show'));
-- migrate:down
-- An undone check-in's row has no place in the older history.
DELETE FROM appointment_events WHERE event = 'scheduled';
ALTER TABLE appointment_events DROP CONSTRAINT appointment_events_event_check;
ALTER TABLE appointment_events ADD CONSTRAINT appointment_events_event_check
    CHECK (event IN ('booked', 'rescheduled', 'confirmed', 'arrived', 'in_progress', 'completed', 'cancelled', 'no_show'));
