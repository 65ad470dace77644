-- Crypto-shredding of attachments (issue 42): each file is sealed under a key of its own (a
-- fresh 256-bit key per attachment: its chunks, and its name and checksum in meta), kept here
-- sealed ("wrapped") under the personal-data key (context "attachment-key:<id>"). Deleting the
-- row deletes the key, so copies of the sealed chunks that outlive the deletion (the WAL, free
-- pages, a backup) open under no key that is left. NULL: a file stored before this migration,
-- sealed directly under the data key as 0016 says; it opens as before, and the next
-- `clinic admin rotate-key` moves it to a key of its own (it rewrites its chunks anyway).
-- Nothing is re-sealed here.

-- migrate:up
ALTER TABLE attachments ADD COLUMN file_key BLOB;

-- migrate:down
-- Before this runs, the files with a key of their own are sealed again under the data key
-- (DatabaseManager's hook for version 20), so the older program opens them.
ALTER TABLE attachments DROP COLUMN file_key;
