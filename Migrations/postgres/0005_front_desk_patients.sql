-- The front desk's patients (issue 29): Migrations/0017_front_desk_patients.sql says what a
-- search token is, when the index is made again, and what walk-ins and claim codes are.
-- migrate:up
CREATE TABLE patient_search (
    token bytea NOT NULL,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    PRIMARY KEY (token, client_id)
);
CREATE INDEX patient_search_client ON patient_search (client_id);

CREATE TABLE walk_ins (
    client_id bigint PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    clinic_id bigint NOT NULL REFERENCES clinics (id),
    staff_id bigint REFERENCES staff_accounts (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX walk_ins_clinic ON walk_ins (clinic_id);

CREATE TABLE claim_codes (
    client_id bigint PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    code_hash text NOT NULL UNIQUE,
    expires_at timestamptz NOT NULL
);

-- migrate:down
DELETE FROM settings WHERE key = 'search.index_check';
DROP TABLE claim_codes;
DROP TABLE walk_ins;
DROP TABLE patient_search;
