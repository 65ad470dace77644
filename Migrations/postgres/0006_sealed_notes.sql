-- An appointment's notes sealed at rest (issue 30): Migrations/0018_sealed_notes.sql says how.
-- PostgresStore.migrate seals the notes still in clear after the move up, and opens them all
-- before a move down past this version.
-- migrate:up
COMMENT ON COLUMN appointments.notes IS 'sealed: '''' or U+0001 and the base64 of a box under the personal-data key (AppointmentNotes)';
-- migrate:down
COMMENT ON COLUMN appointments.notes IS NULL;
