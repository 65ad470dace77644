-- The initial schema: the directory (clinics, departments, doctors, working hours),
-- patients, their sessions and appointments, and the geocoding cache.
-- Instants are UTC seconds since 1970 (INTEGER); local times are minutes after midnight.

-- migrate:up
CREATE TABLE clinics (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL CHECK (length(trim(name)) > 0),
    address TEXT NOT NULL,
    city TEXT NOT NULL,
    city_key TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT '',
    zip TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL DEFAULT '',
    lat REAL NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon REAL NOT NULL CHECK (lon BETWEEN -180 AND 180),
    is_pediatric INTEGER NOT NULL DEFAULT 0 CHECK (is_pediatric IN (0, 1)),
    is_hospital INTEGER NOT NULL DEFAULT 0 CHECK (is_hospital IN (0, 1)),
    time_zone TEXT NOT NULL,
    phone TEXT NOT NULL DEFAULT '',
    website TEXT NOT NULL DEFAULT ''
);
CREATE INDEX clinics_city_key ON clinics (city_key);

CREATE TABLE departments (
    id INTEGER PRIMARY KEY,
    clinic_id INTEGER NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    specialization TEXT NOT NULL CHECK (length(trim(specialization)) > 0),
    is_demo INTEGER NOT NULL DEFAULT 0 CHECK (is_demo IN (0, 1)),
    UNIQUE (clinic_id, specialization)
);
CREATE INDEX departments_specialization ON departments (specialization);

CREATE TABLE doctors (
    id INTEGER PRIMARY KEY,
    department_id INTEGER NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    name TEXT NOT NULL CHECK (length(trim(name)) > 0),
    is_demo INTEGER NOT NULL DEFAULT 0 CHECK (is_demo IN (0, 1))
);
CREATE INDEX doctors_department ON doctors (department_id);

CREATE TABLE working_hours (
    id INTEGER PRIMARY KEY,
    doctor_id INTEGER NOT NULL REFERENCES doctors (id) ON DELETE CASCADE,
    weekday INTEGER NOT NULL CHECK (weekday BETWEEN 1 AND 7),
    start_minute INTEGER NOT NULL CHECK (start_minute BETWEEN 0 AND 1439),
    end_minute INTEGER NOT NULL CHECK (end_minute BETWEEN 1 AND 1440 AND end_minute > start_minute),
    slot_minutes INTEGER NOT NULL CHECK (slot_minutes BETWEEN 5 AND 480)
);
CREATE INDEX working_hours_doctor ON working_hours (doctor_id, weekday);

CREATE TABLE clients (
    id INTEGER PRIMARY KEY,
    login TEXT NOT NULL,
    login_key TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    surname TEXT NOT NULL,
    street TEXT NOT NULL,
    house TEXT NOT NULL,
    city TEXT NOT NULL,
    lat REAL CHECK (lat IS NULL OR lat BETWEEN -90 AND 90),
    lon REAL CHECK (lon IS NULL OR lon BETWEEN -180 AND 180),
    home_clinic_id INTEGER REFERENCES clinics (id) ON DELETE SET NULL,
    preferred_language TEXT NOT NULL DEFAULT 'en' CHECK (preferred_language IN ('en', 'ru')),
    privacy_accepted_at INTEGER,
    privacy_version INTEGER,
    created_at INTEGER NOT NULL
);

CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    client_id INTEGER NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    -- SHA-256 of the token, hex; the token itself is never stored.
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL
);
CREATE INDEX sessions_client ON sessions (client_id);

CREATE TABLE appointments (
    id INTEGER PRIMARY KEY,
    client_id INTEGER REFERENCES clients (id) ON DELETE SET NULL,
    clinic_id INTEGER NOT NULL REFERENCES clinics (id),
    department_id INTEGER NOT NULL REFERENCES departments (id),
    doctor_id INTEGER NOT NULL REFERENCES doctors (id),
    doctor_name TEXT NOT NULL,
    starts_at INTEGER NOT NULL,
    ends_at INTEGER NOT NULL CHECK (ends_at > starts_at),
    status TEXT NOT NULL DEFAULT 'scheduled'
        CHECK (status IN ('scheduled', 'confirmed', 'completed', 'cancelled', 'no_show')),
    notes TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
-- One active appointment per doctor and start, enforced by the database itself.
CREATE UNIQUE INDEX appointments_doctor_slot ON appointments (doctor_id, starts_at)
    WHERE status IN ('scheduled', 'confirmed');
-- A patient cannot hold two active appointments starting at the same instant.
CREATE UNIQUE INDEX appointments_client_slot ON appointments (client_id, starts_at)
    WHERE status IN ('scheduled', 'confirmed') AND client_id IS NOT NULL;
CREATE INDEX appointments_client ON appointments (client_id, starts_at);

CREATE TABLE geocode_cache (
    query TEXT PRIMARY KEY,
    lat REAL NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon REAL NOT NULL CHECK (lon BETWEEN -180 AND 180),
    precision TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
);

-- Small key-value facts about this database, e.g. whether its directory was filled.
CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- migrate:down
DROP TABLE settings;
DROP TABLE geocode_cache;
DROP TABLE appointments;
DROP TABLE sessions;
DROP TABLE clients;
DROP TABLE working_hours;
DROP TABLE doctors;
DROP TABLE departments;
DROP TABLE clinics;
