-- The front desk's search of patients (issue 29): a keyed blind index beside the sealed
-- personal fields. Each row is one token, the first 16 bytes of HMAC-SHA256 under the index key
-- (derived from the personal-data key, never stored) of one normalised prefix of a patient's
-- name, surname, e-mail address or login (ClinicKit's PatientIndex). The tokens go with the
-- patient's row. settings 'search.index_check' says which key the tokens were made under: when
-- it is missing (this migration) or another key's (a rotation, a copy), the index is made again
-- before the next search.

-- migrate:up
CREATE TABLE patient_search (
    token BLOB NOT NULL,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    PRIMARY KEY (token, client_id)
);
CREATE INDEX patient_search_client ON patient_search (client_id);

-- migrate:down
DELETE FROM settings WHERE key = 'search.index_check';
DROP TABLE patient_search;
