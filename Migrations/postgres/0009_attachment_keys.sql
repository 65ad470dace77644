-- Crypto-shredding of attachments (issue 42): each file is sealed under a key of its own, kept
-- in attachments.file_key wrapped under the personal-data key; NULL: a file stored before,
-- sealed directly under the data key. The SQLite store's 0020_attachment_keys.sql says more.
-- migrate:up
ALTER TABLE attachments ADD COLUMN file_key bytea;
-- migrate:down
-- The older program cannot open a file sealed under a key of its own, and SQL cannot seal it
-- again under the data key: moving down is refused while such files exist (delete them, or
-- copy the store to SQLite and move that down, whose hook re-seals them).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM attachments WHERE file_key IS NOT NULL) THEN
        RAISE EXCEPTION 'attachments sealed under keys of their own (file_key) exist: the older schema cannot open them';
    END IF;
END $$;
ALTER TABLE attachments DROP COLUMN file_key;
