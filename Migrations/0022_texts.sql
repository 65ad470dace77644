-- Text messages (issue 45): a patient's mobile number, confirmed by a code sent to it, with
-- what may come by text; the outbox's deliveries go by text too; a waitlist offer's one-tap link.
--
-- `phones`: at most one number per patient, sealed like the other personal fields
-- (`number_sealed`, context `phone:<client>`), found again from an incoming text by
-- `number_key` (an HMAC of the E.164 number under the personal-data key: the number is not
-- readable from the index). A confirmed number belongs to one patient (`phones_confirmed`):
-- whoever confirms it last, having the phone in hand, keeps it. `stopped`: the patient replied
-- STOP (nothing more is texted until START); `text_reminders`/`text_offers`: what they chose.
--
-- `deliveries.purpose` gains 'text' (a message's text to the confirmed number, its body
-- sealed in `payload` when written) and 'text_code' (a confirmation code to the number being
-- confirmed); `report` is the gateway's last delivery report ('accepted', 'delivered',
-- 'buffered', 'rejected', 'failed') and `reported_at` its time.
--
-- `waitlist_entries.note`: the front desk's note on an entry ("mornings only, call first"),
-- sealed under the personal-data key (context `waitlist-note:<entry>`).
--
-- `waitlist_offers.link_hash`: the SHA-256 of the offer's one-tap link's token (the token is
-- only in the text sent); `link_used_at`: when the link accepted or declined (single use).

-- `slot_holds_expired`: a patient's own hold deleted after it expired queues its time for the
-- waitlist (as `appointments_freed` does for an appointment), when someone waits at that
-- department; an offer's hold is the waitlist's own (closing the offer queues it), and a hold
-- deleted before its expiry was booked or released by its patient.

-- migrate:up
CREATE TRIGGER slot_holds_expired AFTER DELETE ON slot_holds
WHEN OLD.for_offer = 0 AND OLD.expires_at <= CAST(strftime('%s', 'now') AS INTEGER)
BEGIN
    INSERT INTO waitlist_freed (department_id, doctor_id, starts_at, ends_at, freed_at)
    SELECT OLD.department_id, OLD.doctor_id, OLD.starts_at, OLD.ends_at, CAST(strftime('%s', 'now') AS INTEGER)
    WHERE EXISTS (SELECT 1 FROM waitlist_entries WHERE department_id = OLD.department_id AND status = 'waiting');
END;

CREATE TABLE phones (
    client_id INTEGER PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    number_sealed BLOB NOT NULL,
    number_key TEXT NOT NULL,
    confirmed INTEGER NOT NULL DEFAULT 0 CHECK (confirmed IN (0, 1)),
    code_hash TEXT,
    code_expires_at INTEGER,
    code_attempts INTEGER NOT NULL DEFAULT 0,
    code_sent_at INTEGER,
    text_reminders INTEGER NOT NULL DEFAULT 1 CHECK (text_reminders IN (0, 1)),
    text_offers INTEGER NOT NULL DEFAULT 1 CHECK (text_offers IN (0, 1)),
    stopped INTEGER NOT NULL DEFAULT 0 CHECK (stopped IN (0, 1)),
    updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX phones_confirmed ON phones (number_key) WHERE confirmed = 1;

ALTER TABLE waitlist_entries ADD COLUMN note BLOB;
ALTER TABLE waitlist_offers ADD COLUMN link_hash TEXT;
ALTER TABLE waitlist_offers ADD COLUMN link_used_at INTEGER;
CREATE UNIQUE INDEX waitlist_offers_link ON waitlist_offers (link_hash) WHERE link_hash IS NOT NULL;

CREATE TABLE deliveries_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages (id) ON DELETE CASCADE,
    purpose TEXT NOT NULL CHECK (purpose IN ('message', 'email_code', 'text', 'text_code')),
    payload BLOB,
    created_at INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'dropped')),
    sent_at INTEGER,
    reply TEXT,
    last_error TEXT,
    report TEXT CHECK (report IN ('accepted', 'delivered', 'buffered', 'rejected', 'failed')),
    reported_at INTEGER
);
INSERT INTO deliveries_new (id, client_id, message_id, purpose, payload, created_at, next_attempt_at, attempts, state, sent_at,
                            reply, last_error)
    SELECT id, client_id, message_id, purpose, payload, created_at, next_attempt_at, attempts, state, sent_at, reply, last_error
    FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);

-- migrate:down
DROP TRIGGER slot_holds_expired;
DELETE FROM deliveries WHERE purpose IN ('text', 'text_code');
CREATE TABLE deliveries_old (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages (id) ON DELETE CASCADE,
    purpose TEXT NOT NULL CHECK (purpose IN ('message', 'email_code')),
    payload BLOB,
    created_at INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'dropped')),
    sent_at INTEGER,
    reply TEXT,
    last_error TEXT
);
INSERT INTO deliveries_old (id, client_id, message_id, purpose, payload, created_at, next_attempt_at, attempts, state, sent_at,
                            reply, last_error)
    SELECT id, client_id, message_id, purpose, payload, created_at, next_attempt_at, attempts, state, sent_at, reply, last_error
    FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_old RENAME TO deliveries;
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);
DROP INDEX waitlist_offers_link;
ALTER TABLE waitlist_offers DROP COLUMN link_used_at;
ALTER TABLE waitlist_offers DROP COLUMN link_hash;
ALTER TABLE waitlist_entries DROP COLUMN note;
DROP TABLE phones;
