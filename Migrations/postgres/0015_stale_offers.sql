-- An "earlier time" offer withdrawn when its appointment ends or moves to before the offered
-- time (issue 55; Migrations/0024_stale_offers.sql on SQLite says why), in the transaction
-- that changes the appointment: the offer's hold goes, its time is queued for the next in line
-- when someone waits, and the entry waits again (moved) or leaves (ended).

-- migrate:up
CREATE FUNCTION appointment_offer_stale() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ended boolean := NEW.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress');
    stale record;
BEGIN
    IF OLD.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress') OR NOT (ended OR NEW.starts_at < OLD.starts_at) THEN
        RETURN NULL;
    END IF;
    FOR stale IN
        SELECT o.id, o.hold_id, o.entry_id, o.department_id, o.doctor_id, o.starts_at, o.ends_at
        FROM waitlist_offers o JOIN waitlist_entries e ON e.id = o.entry_id
        WHERE e.before_appointment_id = NEW.id AND o.status = 'open' AND (ended OR NEW.starts_at < o.starts_at)
        FOR UPDATE OF o
    LOOP
        UPDATE waitlist_offers SET status = 'withdrawn', closed_at = clock_timestamp() WHERE id = stale.id;
        DELETE FROM slot_holds WHERE id = stale.hold_id;
        UPDATE waitlist_entries SET status = CASE WHEN ended THEN 'left' ELSE 'waiting' END, updated_at = clock_timestamp()
        WHERE id = stale.entry_id AND status = 'offered';
        IF stale.starts_at > clock_timestamp()
           AND EXISTS (SELECT 1 FROM waitlist_entries WHERE department_id = stale.department_id AND status = 'waiting') THEN
            INSERT INTO waitlist_freed (department_id, doctor_id, starts_at, ends_at, freed_at)
            VALUES (stale.department_id, stale.doctor_id, stale.starts_at, stale.ends_at, clock_timestamp());
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;
CREATE TRIGGER appointments_offer_stale AFTER UPDATE OF status, starts_at ON appointments
    FOR EACH ROW EXECUTE FUNCTION appointment_offer_stale();

-- migrate:down
DROP TRIGGER appointments_offer_stale ON appointments;
DROP FUNCTION appointment_offer_stale();
