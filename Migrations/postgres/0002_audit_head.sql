-- The audit chain's head row exists from the schema on: an appender locks it
-- (SELECT … FROM audit_head WHERE id = 1 FOR UPDATE) before reading the head it chains to,
-- and a lock on a row that is not there yet would serialise nothing (two first appends would
-- both follow the empty chain). An empty chain's head is last_id 0 with the genesis hash
-- (64 zeros), which the store reads as "no head" (SQLite has no row then). A database whose
-- trail has rows already keeps the head it has.
-- migrate:up
INSERT INTO audit_head (id, last_id, hash)
SELECT 1, 0, repeat('0', 64) WHERE NOT EXISTS (SELECT 1 FROM audit_events)
ON CONFLICT (id) DO NOTHING;

-- migrate:down
DELETE FROM audit_head WHERE id = 1 AND last_id = 0 AND hash = repeat('0', 64);
