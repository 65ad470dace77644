-- Text messages (issue 45; Migrations/0022_texts.sql says what each part is). A confirmed
-- number belongs to one patient (`phones_confirmed`, a unique index: two servers confirming
-- one number at once keep one); a one-tap link is used once (`link_used_at` set in the
-- statement that checks it is unset).
-- `slot_holds_expired`: a patient's own hold deleted after it expired queues its time for the
-- waitlist (Migrations/0022_texts.sql).
-- migrate:up
CREATE FUNCTION slot_hold_expired() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT OLD.for_offer AND OLD.expires_at <= now()
       AND EXISTS (SELECT 1 FROM waitlist_entries WHERE department_id = OLD.department_id AND status = 'waiting') THEN
        INSERT INTO waitlist_freed (department_id, doctor_id, starts_at, ends_at, freed_at)
        VALUES (OLD.department_id, OLD.doctor_id, OLD.starts_at, OLD.ends_at, now());
    END IF;
    RETURN OLD;
END;
$$;
CREATE TRIGGER slot_holds_expired AFTER DELETE ON slot_holds FOR EACH ROW EXECUTE FUNCTION slot_hold_expired();

CREATE TABLE phones (
    client_id bigint PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    number_sealed bytea NOT NULL,
    number_key text NOT NULL,
    confirmed boolean NOT NULL DEFAULT false,
    code_hash text,
    code_expires_at timestamptz,
    code_attempts integer NOT NULL DEFAULT 0,
    code_sent_at timestamptz,
    text_reminders boolean NOT NULL DEFAULT true,
    text_offers boolean NOT NULL DEFAULT true,
    stopped boolean NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX phones_confirmed ON phones (number_key) WHERE confirmed;

ALTER TABLE waitlist_entries ADD COLUMN note bytea;
ALTER TABLE waitlist_offers ADD COLUMN link_hash text, ADD COLUMN link_used_at timestamptz;
CREATE UNIQUE INDEX waitlist_offers_link ON waitlist_offers (link_hash) WHERE link_hash IS NOT NULL;

ALTER TABLE deliveries DROP CONSTRAINT deliveries_purpose_check,
    ADD CONSTRAINT deliveries_purpose_check CHECK (purpose IN ('message', 'email_code', 'text', 'text_code')),
    ADD COLUMN report text CHECK (report IN ('accepted', 'delivered', 'buffered', 'rejected', 'failed')),
    ADD COLUMN reported_at timestamptz;

-- migrate:down
DROP TRIGGER slot_holds_expired ON slot_holds;
DROP FUNCTION slot_hold_expired();
DELETE FROM deliveries WHERE purpose IN ('text', 'text_code');
ALTER TABLE deliveries DROP COLUMN reported_at, DROP COLUMN report, DROP CONSTRAINT deliveries_purpose_check,
    ADD CONSTRAINT deliveries_purpose_check CHECK (purpose IN ('message', 'email_code'));
DROP INDEX waitlist_offers_link;
ALTER TABLE waitlist_offers DROP COLUMN link_used_at, DROP COLUMN link_hash;
ALTER TABLE waitlist_entries DROP COLUMN note;
DROP TABLE phones;
