-- Silent accounts no longer hold every freed time (issue 55): an entry whose offer lapsed goes
-- to the back of its line (`queued_at`, the line's order with `created_at` before the first
-- lapse), and after `lapses` reaches two it is paused (left out of the line, still 'waiting')
-- until its patient acts (`WaitlistController.resume`: lapses back to 0).

-- migrate:up
ALTER TABLE waitlist_entries ADD COLUMN lapses INTEGER NOT NULL DEFAULT 0 CHECK (lapses >= 0);
ALTER TABLE waitlist_entries ADD COLUMN queued_at INTEGER;
DROP INDEX waitlist_entries_waiting;
CREATE INDEX waitlist_entries_waiting ON waitlist_entries (department_id, priority DESC, coalesce(queued_at, created_at), id)
    WHERE status = 'waiting' AND lapses < 2;

-- migrate:down
DROP INDEX waitlist_entries_waiting;
ALTER TABLE waitlist_entries DROP COLUMN queued_at;
ALTER TABLE waitlist_entries DROP COLUMN lapses;
CREATE INDEX waitlist_entries_waiting ON waitlist_entries (department_id, priority DESC, created_at, id)
    WHERE status = 'waiting';
