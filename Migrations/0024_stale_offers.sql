-- An "earlier time" offer withdrawn when its appointment ends or moves to or before the offered
-- time (issue 55): accepting it would book a visit the patient no longer asked for, or move
-- theirs later. In the transaction that changes the appointment, whatever front changed it:
-- the offer's hold goes (its time is queued for the next in line when someone waits), the
-- entry waits again (the appointment moved) or leaves (it ended). Moving exactly to the offered
-- time is accepting the offer itself (nobody else can move there: the offer holds it).

-- migrate:up
CREATE TRIGGER appointments_offer_stale AFTER UPDATE OF status, starts_at ON appointments
WHEN OLD.status IN ('scheduled', 'confirmed', 'arrived', 'in_progress')
     AND (NEW.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress') OR NEW.starts_at < OLD.starts_at)
BEGIN
    INSERT INTO waitlist_freed (department_id, doctor_id, starts_at, ends_at, freed_at)
    SELECT o.department_id, o.doctor_id, o.starts_at, o.ends_at, CAST(strftime('%s', 'now') AS INTEGER)
    FROM waitlist_offers o JOIN waitlist_entries e ON e.id = o.entry_id
    WHERE e.before_appointment_id = NEW.id AND o.status = 'open'
      AND (NEW.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress') OR NEW.starts_at < o.starts_at)
      AND o.starts_at > CAST(strftime('%s', 'now') AS INTEGER)
      AND EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.department_id = o.department_id AND w.status = 'waiting');
    DELETE FROM slot_holds WHERE id IN (
        SELECT o.hold_id FROM waitlist_offers o JOIN waitlist_entries e ON e.id = o.entry_id
        WHERE e.before_appointment_id = NEW.id AND o.status = 'open'
          AND (NEW.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress') OR NEW.starts_at < o.starts_at));
    UPDATE waitlist_entries
    SET status = CASE WHEN NEW.status IN ('scheduled', 'confirmed', 'arrived', 'in_progress') THEN 'waiting' ELSE 'left' END,
        updated_at = CAST(strftime('%s', 'now') AS INTEGER)
    WHERE before_appointment_id = NEW.id AND status = 'offered' AND id IN (
        SELECT o.entry_id FROM waitlist_offers o WHERE o.status = 'open'
          AND (NEW.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress') OR NEW.starts_at < o.starts_at));
    UPDATE waitlist_offers SET status = 'withdrawn', closed_at = CAST(strftime('%s', 'now') AS INTEGER)
    WHERE status = 'open' AND entry_id IN (SELECT id FROM waitlist_entries WHERE before_appointment_id = NEW.id)
      AND (NEW.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress') OR NEW.starts_at < starts_at);
END;

-- migrate:down
DROP TRIGGER appointments_offer_stale;
