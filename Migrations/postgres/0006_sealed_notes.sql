-- An appointment's notes sealed at rest (issue 30): Migrations/0018_sealed_notes.sql says how.
-- PostgresStore.migrate seals the notes still in clear after the move up, and opens them all
-- before a move down past this version. It looks for notes in clear after every migrate: the
-- partial index holds just those (none, but for a moment), so the look is not a table scan.
-- migrate:up
COMMENT ON COLUMN appointments.notes IS 'sealed: '''' or U+0001 and the base64 of a box under the personal-data key (AppointmentNotes)';
CREATE INDEX appointments_plain_notes ON appointments (id) WHERE notes <> '' AND left(notes, 1) <> chr(1);
-- migrate:down
DROP INDEX appointments_plain_notes;
COMMENT ON COLUMN appointments.notes IS NULL;
