-- The front desk's patients (issue 29).
--
-- patient_search: a keyed blind index beside the sealed personal fields. Each row is one
-- token, the first 16 bytes of HMAC-SHA256 under the index key (derived from the personal-data
-- key, never stored) of one normalised prefix of a patient's name, surname, e-mail address,
-- phone, date of birth or login (ClinicKit's PatientIndex). The tokens go with the patient's
-- row. settings 'search.index_check' says which key the tokens were made under: when it is
-- missing (this migration) or another key's (a rotation, a copy), the index is made again
-- before the next search.
--
-- walk_ins: a patient the front desk registered without an online account (no password, a
-- login no one can type), and the clinic that did: they are that clinic's patient from then on.
-- claim_codes: the one code (its SHA-256) with which such a patient sets a login and a
-- password; it is deleted when used, and refused after it expires.

-- migrate:up
CREATE TABLE patient_search (
    token BLOB NOT NULL,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    PRIMARY KEY (token, client_id)
);
CREATE INDEX patient_search_client ON patient_search (client_id);

CREATE TABLE walk_ins (
    client_id INTEGER PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    clinic_id INTEGER NOT NULL REFERENCES clinics (id),
    staff_id INTEGER REFERENCES staff_accounts (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX walk_ins_clinic ON walk_ins (clinic_id);

CREATE TABLE claim_codes (
    client_id INTEGER PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL UNIQUE,
    expires_at INTEGER NOT NULL
);

-- migrate:down
DELETE FROM settings WHERE key = 'search.index_check';
DROP TABLE claim_codes;
DROP TABLE walk_ins;
DROP TABLE patient_search;
