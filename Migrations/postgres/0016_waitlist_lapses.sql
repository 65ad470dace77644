-- Silent accounts no longer hold every freed time (issue 55; Migrations/0025_waitlist_lapses.sql
-- on SQLite): a lapsed offer sends its entry to the back of the line (`queued_at`), and two
-- lapses pause it until its patient acts.

-- migrate:up
ALTER TABLE waitlist_entries ADD COLUMN lapses integer NOT NULL DEFAULT 0 CHECK (lapses >= 0),
    ADD COLUMN queued_at timestamptz;
DROP INDEX waitlist_entries_waiting;
CREATE INDEX waitlist_entries_waiting ON waitlist_entries (department_id, priority DESC, (coalesce(queued_at, created_at)), id)
    WHERE status = 'waiting' AND lapses < 2;

-- migrate:down
DROP INDEX waitlist_entries_waiting;
ALTER TABLE waitlist_entries DROP COLUMN queued_at, DROP COLUMN lapses;
CREATE INDEX waitlist_entries_waiting ON waitlist_entries (department_id, priority DESC, created_at, id)
    WHERE status = 'waiting';
