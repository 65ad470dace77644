-- Holds on slots (issue 27; Migrations/0015_slot_holds.sql says what a hold is). Two live
-- holds of one doctor never overlap: the exclusion constraint refuses the second (an expired
-- row is deleted by the holding transaction before it inserts, so it never stands in the way).
-- migrate:up
CREATE TABLE slot_holds (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    clinic_id bigint NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    department_id bigint NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    doctor_id bigint NOT NULL REFERENCES doctors (id) ON DELETE CASCADE,
    visit_type_id bigint,
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL CHECK (ends_at > starts_at),
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT slot_holds_doctor_no_overlap EXCLUDE USING gist
        (doctor_id WITH =, tstzrange(starts_at, ends_at) WITH &&)
);
CREATE INDEX slot_holds_client ON slot_holds (client_id);
CREATE INDEX slot_holds_expiry ON slot_holds (expires_at);

-- migrate:down
DROP TABLE slot_holds;
