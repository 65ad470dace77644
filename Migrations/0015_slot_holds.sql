-- Holds on slots (issue 27, FHIR's Appointment/$hold). A patient holds a free slot for a few
-- minutes (the booking rule booking.hold_seconds) while finishing a booking elsewhere: until it
-- expires nobody else can book or hold the slot, and the patient books it with $book. A hold
-- is not an appointment: it has no history, no inbox message, and it ends by itself. Rows past
-- expires_at mean nothing (every read compares with the clock) and are deleted by the next hold.
-- A patient has one hold at a time; holds go with the patient's account and with the doctor.

-- migrate:up
CREATE TABLE slot_holds (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    clinic_id INTEGER NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    department_id INTEGER NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    doctor_id INTEGER NOT NULL REFERENCES doctors (id) ON DELETE CASCADE,
    visit_type_id INTEGER,
    starts_at INTEGER NOT NULL,
    ends_at INTEGER NOT NULL CHECK (ends_at > starts_at),
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX slot_holds_doctor ON slot_holds (doctor_id, starts_at);
CREATE INDEX slot_holds_client ON slot_holds (client_id);
CREATE INDEX slot_holds_expiry ON slot_holds (expires_at);

-- migrate:down
DROP TABLE slot_holds;
