-- One hold per patient, held by the database (issue 42): holding a slot releases the patient's
-- earlier hold, and two servers holding for one patient at once serialise on the patient's
-- advisory lock (PostgresTransaction.deleteSlotHolds); this unique index is the last line
-- should anything write a hold another way. Holds a patient took twice at once before this
-- version are cut back to the newest.
-- migrate:up
DELETE FROM slot_holds h USING slot_holds newer WHERE newer.client_id = h.client_id AND newer.id > h.id;
DROP INDEX slot_holds_client;
CREATE UNIQUE INDEX slot_holds_one_per_client ON slot_holds (client_id);
-- migrate:down
DROP INDEX slot_holds_one_per_client;
CREATE INDEX slot_holds_client ON slot_holds (client_id);
