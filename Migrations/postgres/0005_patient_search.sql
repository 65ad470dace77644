-- The front desk's search of patients (issue 29): Migrations/0017_patient_search.sql says what
-- a token is and when the index is made again.
-- migrate:up
CREATE TABLE patient_search (
    token bytea NOT NULL,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    PRIMARY KEY (token, client_id)
);
CREATE INDEX patient_search_client ON patient_search (client_id);

-- migrate:down
DELETE FROM settings WHERE key = 'search.index_check';
DROP TABLE patient_search;
