-- The PostgreSQL store's schema: the same tables, columns, keys and checks as SQLite's
-- Migrations/0001…0014 produce, in PostgreSQL's own types. Ids are bigint identities
-- (a sequence never hands out a number twice, like SQLite's AUTOINCREMENT), instants are
-- timestamptz, flags boolean, sealed blobs bytea. Double booking is refused by exclusion
-- constraints on time ranges, not only by equal starts as SQLite's unique indexes do.
-- migrate:up
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE clinics (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    external_id text NOT NULL CONSTRAINT clinics_external_id_key UNIQUE,
    name text NOT NULL CHECK (length(btrim(name)) > 0),
    address text NOT NULL,
    city text NOT NULL,
    city_key text NOT NULL,
    state text NOT NULL DEFAULT '',
    zip text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    category text NOT NULL DEFAULT '',
    lat double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
    is_pediatric boolean NOT NULL DEFAULT false,
    is_hospital boolean NOT NULL DEFAULT false,
    time_zone text NOT NULL,
    phone text NOT NULL DEFAULT '',
    website text NOT NULL DEFAULT ''
);
CREATE INDEX clinics_city_key ON clinics (city_key);

CREATE TABLE departments (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    clinic_id bigint NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    specialization text NOT NULL CHECK (length(btrim(specialization)) > 0),
    is_demo boolean NOT NULL DEFAULT false,
    CONSTRAINT departments_clinic_specialization_key UNIQUE (clinic_id, specialization)
);
CREATE INDEX departments_specialization ON departments (specialization);

CREATE TABLE doctors (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    department_id bigint NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (length(btrim(name)) > 0),
    is_demo boolean NOT NULL DEFAULT false,
    is_active boolean NOT NULL DEFAULT true
);
CREATE INDEX doctors_department ON doctors (department_id);

CREATE TABLE working_hours (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    doctor_id bigint NOT NULL REFERENCES doctors (id) ON DELETE CASCADE,
    weekday smallint NOT NULL CHECK (weekday BETWEEN 1 AND 7),
    start_minute smallint NOT NULL CHECK (start_minute BETWEEN 0 AND 1439),
    end_minute smallint NOT NULL CHECK (end_minute BETWEEN 1 AND 1440 AND end_minute > start_minute),
    slot_minutes smallint NOT NULL CHECK (slot_minutes BETWEEN 5 AND 480)
);
CREATE INDEX working_hours_doctor ON working_hours (doctor_id, weekday);

CREATE TABLE working_exceptions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    doctor_id bigint NOT NULL REFERENCES doctors (id) ON DELETE CASCADE,
    -- The clinic's local calendar day.
    day date NOT NULL,
    -- NULL start and end: a day off. Otherwise these hours replace the weekly hours that day.
    start_minute smallint CHECK (start_minute BETWEEN 0 AND 1439),
    end_minute smallint CHECK (end_minute BETWEEN 1 AND 1440),
    slot_minutes smallint CHECK (slot_minutes BETWEEN 5 AND 480),
    CHECK ((start_minute IS NULL AND end_minute IS NULL AND slot_minutes IS NULL)
        OR (start_minute IS NOT NULL AND end_minute > start_minute AND slot_minutes IS NOT NULL))
);
CREATE INDEX working_exceptions_doctor_day ON working_exceptions (doctor_id, day);

CREATE TABLE visit_types (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    department_id bigint NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    name_en text NOT NULL CHECK (length(btrim(name_en)) BETWEEN 1 AND 100),
    name_ru text NOT NULL CHECK (length(btrim(name_ru)) BETWEEN 1 AND 100),
    duration_minutes smallint NOT NULL CHECK (duration_minutes BETWEEN 5 AND 480 AND duration_minutes % 5 = 0),
    price_cents bigint CHECK (price_cents IS NULL OR price_cents BETWEEN 0 AND 100000000),
    is_active boolean NOT NULL DEFAULT true
);
CREATE INDEX visit_types_department ON visit_types (department_id);

CREATE TABLE clients (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    login text NOT NULL,
    login_key text NOT NULL CONSTRAINT clients_login_key_key UNIQUE,
    password_hash text NOT NULL,
    name text NOT NULL,
    surname text NOT NULL,
    street text NOT NULL,
    house text NOT NULL,
    city text NOT NULL,
    lat double precision CHECK (lat IS NULL OR lat BETWEEN -90 AND 90),
    lon double precision CHECK (lon IS NULL OR lon BETWEEN -180 AND 180),
    home_clinic_id bigint REFERENCES clinics (id) ON DELETE SET NULL,
    preferred_language text NOT NULL DEFAULT 'en' CHECK (preferred_language IN ('en', 'ru')),
    privacy_accepted_at timestamptz,
    privacy_version integer,
    created_at timestamptz NOT NULL,
    -- Name, surname, street, house and coordinates sealed with ChaCha20-Poly1305.
    personal bytea,
    email_confirmed boolean NOT NULL DEFAULT false
);

CREATE TABLE sessions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    -- SHA-256 of the token, hex; the token itself is never stored.
    token_hash text NOT NULL CONSTRAINT sessions_token_hash_key UNIQUE,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz NOT NULL,
    device_name text,
    device_platform text,
    device_app_version text
);
CREATE INDEX sessions_client ON sessions (client_id);

CREATE TABLE geocode_cache (
    query text PRIMARY KEY,
    lat double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
    precision text NOT NULL,
    source text NOT NULL,
    created_at timestamptz NOT NULL,
    hits bigint NOT NULL DEFAULT 0
);

CREATE TABLE settings (
    key text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE login_attempts (
    -- The folded login name as typed, whether or not such a patient exists.
    login_key text PRIMARY KEY,
    failures integer NOT NULL CHECK (failures >= 1),
    -- The first failure of the current window.
    first_failure_at timestamptz NOT NULL
);

CREATE TABLE clinic_zone_changes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    clinic_id bigint NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    old_zone text NOT NULL,
    new_zone text NOT NULL,
    changed_at timestamptz NOT NULL
);
CREATE INDEX clinic_zone_changes_clinic ON clinic_zone_changes (clinic_id, changed_at);

CREATE TABLE idempotency_keys (
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    -- The client's Idempotency-Key header, as sent.
    key text NOT NULL,
    -- SHA-256 of the method, the route and the body: the same key with another request is refused.
    fingerprint text NOT NULL,
    status integer NOT NULL,
    body bytea NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (client_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Counts every change of the clinic directory (the finder's caches compare it).
CREATE TABLE directory_version (
    id smallint PRIMARY KEY CHECK (id = 1),
    version bigint NOT NULL
);
INSERT INTO directory_version (id, version) VALUES (1, 0);
CREATE FUNCTION clinics_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE directory_version SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END;
$$;
CREATE TRIGGER clinics_changed AFTER INSERT OR UPDATE OR DELETE ON clinics
    FOR EACH STATEMENT EXECUTE FUNCTION clinics_changed();

CREATE TABLE staff_accounts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    login text NOT NULL,
    login_key text NOT NULL CONSTRAINT staff_accounts_login_key_key UNIQUE,
    password_hash text NOT NULL,
    name text NOT NULL CHECK (length(btrim(name)) > 0),
    surname text NOT NULL CHECK (length(btrim(surname)) > 0),
    role text NOT NULL CHECK (role IN ('clinic-admin', 'receptionist', 'doctor')),
    clinic_id bigint NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    -- A doctor account is one doctor of that clinic; NULL for the other roles.
    doctor_id bigint REFERENCES doctors (id) ON DELETE SET NULL,
    is_active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL,
    CHECK ((role = 'doctor') = (doctor_id IS NOT NULL) OR (role = 'doctor' AND NOT is_active))
);
CREATE INDEX staff_accounts_clinic ON staff_accounts (clinic_id);

CREATE TABLE staff_sessions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    staff_id bigint NOT NULL REFERENCES staff_accounts (id) ON DELETE CASCADE,
    -- SHA-256 of the token, hex; the token itself is never stored.
    token_hash text NOT NULL CONSTRAINT staff_sessions_token_hash_key UNIQUE,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz NOT NULL
);
CREATE INDEX staff_sessions_staff ON staff_sessions (staff_id);

-- Active statuses (AppointmentStatus.isActive): scheduled, confirmed, arrived, in_progress.
-- A doctor's active appointments never overlap, nor a patient's: the exclusion constraints
-- are the last line against double booking between servers sharing this database.
CREATE TABLE appointments (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id bigint REFERENCES clients (id) ON DELETE SET NULL,
    clinic_id bigint NOT NULL REFERENCES clinics (id),
    department_id bigint NOT NULL REFERENCES departments (id),
    doctor_id bigint NOT NULL REFERENCES doctors (id),
    doctor_name text NOT NULL,
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL CHECK (ends_at > starts_at),
    status text NOT NULL DEFAULT 'scheduled'
        CHECK (status IN ('scheduled', 'confirmed', 'arrived', 'in_progress', 'completed', 'cancelled', 'no_show')),
    notes text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    visit_type_id bigint,
    CONSTRAINT appointments_doctor_no_overlap EXCLUDE USING gist
        (doctor_id WITH =, tstzrange(starts_at, ends_at) WITH &&)
        WHERE (status IN ('scheduled', 'confirmed', 'arrived', 'in_progress')),
    CONSTRAINT appointments_client_no_overlap EXCLUDE USING gist
        (client_id WITH =, tstzrange(starts_at, ends_at) WITH &&)
        WHERE (status IN ('scheduled', 'confirmed', 'arrived', 'in_progress') AND client_id IS NOT NULL)
);
CREATE INDEX appointments_client ON appointments (client_id, starts_at);
CREATE INDEX appointments_clinic_day ON appointments (clinic_id, starts_at);
CREATE INDEX appointments_upcoming ON appointments (starts_at)
    WHERE status IN ('scheduled', 'confirmed', 'arrived', 'in_progress') AND client_id IS NOT NULL;

CREATE TABLE appointment_events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    appointment_id bigint NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    -- 'booked', 'rescheduled', or the status it moved to.
    event text NOT NULL CHECK (event IN ('booked', 'rescheduled', 'confirmed', 'arrived', 'in_progress', 'completed',
                                         'cancelled', 'no_show')),
    -- Who did it: 'patient' or 'staff' (the operator's changes are 'staff' with no staff_id).
    actor text NOT NULL CHECK (actor IN ('patient', 'staff')),
    at timestamptz NOT NULL,
    -- For 'booked' and 'rescheduled': the slot.
    starts_at timestamptz,
    doctor_id bigint,
    reason text,
    staff_id bigint REFERENCES staff_accounts (id) ON DELETE SET NULL
);
CREATE INDEX appointment_events_appointment ON appointment_events (appointment_id, id);

CREATE TABLE audit_events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL,
    actor text NOT NULL CHECK (actor IN ('operator', 'staff')),
    staff_id bigint,
    role text NOT NULL CHECK (role IN ('operator', 'clinic-admin', 'receptionist', 'doctor')),
    clinic_id bigint,
    action text NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
    client_id bigint,
    appointment_id bigint,
    request_id text,
    detail text NOT NULL DEFAULT '',
    hash text NOT NULL CHECK (length(hash) = 64)
);
CREATE INDEX audit_events_client ON audit_events (client_id, id);
CREATE INDEX audit_events_at ON audit_events (at);
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_events is append-only' USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

CREATE TABLE audit_head (
    id smallint PRIMARY KEY CHECK (id = 1),
    last_id bigint NOT NULL,
    hash text NOT NULL CHECK (length(hash) = 64)
);

CREATE TABLE email_confirmations (
    client_id bigint PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    code_hash text NOT NULL,
    expires_at timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0
);

CREATE TABLE calendar_feeds (
    client_id bigint PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    token_hash text NOT NULL CONSTRAINT calendar_feeds_token_hash_key UNIQUE,
    token_sealed bytea NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE TABLE messages (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('booked', 'rescheduled', 'cancelled', 'clinic_cancelled', 'clinic_changed',
                                       'reminder', 'clinic', 'account')),
    appointment_id bigint,
    clinic_id bigint,
    staff_id bigint,
    subject text NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL,
    read_at timestamptz,
    dedupe_key text
);
CREATE INDEX messages_client ON messages (client_id, id);
CREATE UNIQUE INDEX messages_dedupe ON messages (dedupe_key) WHERE dedupe_key IS NOT NULL;

CREATE TABLE deliveries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    message_id bigint REFERENCES messages (id) ON DELETE CASCADE,
    purpose text NOT NULL CHECK (purpose IN ('message', 'email_code')),
    payload bytea,
    created_at timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'dropped')),
    sent_at timestamptz,
    reply text,
    last_error text
);
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);

-- migrate:down
DROP TABLE deliveries;
DROP TABLE messages;
DROP TABLE calendar_feeds;
DROP TABLE email_confirmations;
DROP TABLE audit_head;
DROP TABLE audit_events;
DROP FUNCTION audit_events_append_only();
DROP TABLE appointment_events;
DROP TABLE appointments;
DROP TABLE staff_sessions;
DROP TABLE staff_accounts;
DROP TABLE directory_version;
DROP TABLE idempotency_keys;
DROP TABLE clinic_zone_changes;
DROP TABLE login_attempts;
DROP TABLE settings;
DROP TABLE geocode_cache;
DROP TABLE sessions;
DROP TABLE clients;
DROP TABLE visit_types;
DROP TABLE working_exceptions;
DROP TABLE working_hours;
DROP TABLE doctors;
DROP TABLE departments;
DROP TABLE clinics;
DROP FUNCTION clinics_changed();
