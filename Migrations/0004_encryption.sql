-- Personal data at rest: a patient's name, surname, street, house and coordinates move into
-- one authenticated envelope (ChaCha20-Poly1305, the key in <database>.key), and the plain
-- columns are blanked. The program encrypts existing rows right after this migration and
-- decrypts them back into the plain columns before its down part runs (both in the same
-- transaction as the migration): SQL alone cannot do either.

-- migrate:up
ALTER TABLE clients ADD COLUMN personal BLOB;

-- migrate:down
ALTER TABLE clients DROP COLUMN personal;
