-- The waitlist (issue 45; Migrations/0021_waitlist.sql says what each table is). Every rule
-- that must hold across servers is the database's: one waiting entry per patient and
-- department, one open offer per entry, one time never offered to an entry twice (unique
-- indexes); a time held for one offer at a time (the holds' exclusion constraint); a queued
-- freed time taken by one server only (`DELETE … FOR UPDATE SKIP LOCKED … RETURNING` in the
-- transaction that makes the offer: a server that dies mid-offer leaves the row queued).
-- An offer's hold is not the patient's own hold: `slot_holds_one_per_client` now counts only
-- the patient's own.
-- migrate:up
CREATE TABLE waitlist_entries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    clinic_id bigint NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    department_id bigint NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    doctor_id bigint REFERENCES doctors (id) ON DELETE CASCADE,
    visit_type_id bigint,
    first_day text NOT NULL,
    last_day text NOT NULL CHECK (last_day >= first_day),
    from_minute integer CHECK (from_minute BETWEEN 0 AND 1439),
    to_minute integer CHECK (to_minute BETWEEN 1 AND 1440),
    weekdays integer NOT NULL DEFAULT 127 CHECK (weekdays BETWEEN 1 AND 127),
    before_appointment_id bigint REFERENCES appointments (id) ON DELETE CASCADE,
    priority integer NOT NULL DEFAULT 0,
    staff_id bigint,
    status text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'offered', 'booked', 'left')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CHECK ((from_minute IS NULL) = (to_minute IS NULL) AND (from_minute IS NULL OR to_minute > from_minute))
);
CREATE UNIQUE INDEX waitlist_entries_one_active ON waitlist_entries (client_id, department_id)
    WHERE status IN ('waiting', 'offered');
CREATE INDEX waitlist_entries_waiting ON waitlist_entries (department_id, priority DESC, created_at, id)
    WHERE status = 'waiting';

CREATE TABLE waitlist_offers (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id bigint NOT NULL REFERENCES waitlist_entries (id) ON DELETE CASCADE,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    hold_id bigint,
    clinic_id bigint NOT NULL,
    department_id bigint NOT NULL,
    doctor_id bigint NOT NULL REFERENCES doctors (id) ON DELETE CASCADE,
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL CHECK (ends_at > starts_at),
    expires_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'declined', 'lapsed', 'withdrawn')),
    appointment_id bigint,
    created_at timestamptz NOT NULL,
    closed_at timestamptz
);
CREATE UNIQUE INDEX waitlist_offers_one_open ON waitlist_offers (entry_id) WHERE status = 'open';
CREATE UNIQUE INDEX waitlist_offers_once ON waitlist_offers (entry_id, doctor_id, starts_at);
CREATE INDEX waitlist_offers_due ON waitlist_offers (expires_at) WHERE status = 'open';
CREATE INDEX waitlist_offers_client ON waitlist_offers (client_id, id);

CREATE TABLE waitlist_freed (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    department_id bigint NOT NULL,
    doctor_id bigint NOT NULL,
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL,
    freed_at timestamptz NOT NULL
);

ALTER TABLE slot_holds ADD COLUMN for_offer boolean NOT NULL DEFAULT false;
DROP INDEX slot_holds_one_per_client;
CREATE UNIQUE INDEX slot_holds_one_per_client ON slot_holds (client_id) WHERE NOT for_offer;

CREATE FUNCTION appointment_freed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status IN ('scheduled', 'confirmed', 'arrived', 'in_progress')
       AND (NEW.status NOT IN ('scheduled', 'confirmed', 'arrived', 'in_progress')
            OR NEW.starts_at <> OLD.starts_at OR NEW.doctor_id <> OLD.doctor_id)
       AND EXISTS (SELECT 1 FROM waitlist_entries WHERE department_id = OLD.department_id AND status = 'waiting') THEN
        INSERT INTO waitlist_freed (department_id, doctor_id, starts_at, ends_at, freed_at)
        VALUES (OLD.department_id, OLD.doctor_id, OLD.starts_at, OLD.ends_at, clock_timestamp());
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER appointments_freed AFTER UPDATE OF status, starts_at, doctor_id ON appointments
    FOR EACH ROW EXECUTE FUNCTION appointment_freed();

ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('booked', 'rescheduled', 'cancelled', 'clinic_cancelled', 'clinic_changed', 'reminder', 'clinic', 'account',
                    'waitlist'));
-- migrate:down
DELETE FROM messages WHERE kind = 'waitlist';
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('booked', 'rescheduled', 'cancelled', 'clinic_cancelled', 'clinic_changed', 'reminder', 'clinic', 'account'));
DROP TRIGGER appointments_freed ON appointments;
DROP FUNCTION appointment_freed();
DELETE FROM slot_holds WHERE for_offer;
DROP INDEX slot_holds_one_per_client;
CREATE UNIQUE INDEX slot_holds_one_per_client ON slot_holds (client_id);
ALTER TABLE slot_holds DROP COLUMN for_offer;
DROP TABLE waitlist_freed;
DROP TABLE waitlist_offers;
DROP TABLE waitlist_entries;
