-- Why a change was made, on an appointment's history: "account deleted" when a patient's
-- deleted account cancels its future appointments (later: a clinic's reason for cancelling).
-- NULL for every event written before, and for events that need no reason.

-- migrate:up
ALTER TABLE appointment_events ADD COLUMN reason TEXT;

-- migrate:down
ALTER TABLE appointment_events DROP COLUMN reason;
