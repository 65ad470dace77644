-- Visit types (issue 14, the specifications' "services"): a department offers visits such as
-- "First visit, 30 min" and "Follow-up, 15 min", named in English and Russian, with a
-- duration (a multiple of the doctors' slot grid, checked when slots are offered) and an
-- optional price. An appointment may name the visit type it was booked for (no foreign key:
-- a removed visit type is deactivated, never deleted). A doctor can be deactivated: no longer
-- offered, booked or listed, with their appointments and history kept.

-- migrate:up
CREATE TABLE visit_types (
    id INTEGER PRIMARY KEY,
    department_id INTEGER NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    name_en TEXT NOT NULL CHECK (length(trim(name_en)) BETWEEN 1 AND 100),
    name_ru TEXT NOT NULL CHECK (length(trim(name_ru)) BETWEEN 1 AND 100),
    duration_minutes INTEGER NOT NULL CHECK (duration_minutes BETWEEN 5 AND 480 AND duration_minutes % 5 = 0),
    price_cents INTEGER CHECK (price_cents IS NULL OR price_cents BETWEEN 0 AND 100000000),
    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1))
);
CREATE INDEX visit_types_department ON visit_types (department_id);
ALTER TABLE appointments ADD COLUMN visit_type_id INTEGER;
ALTER TABLE doctors ADD COLUMN is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1));

-- migrate:down
ALTER TABLE doctors DROP COLUMN is_active;
ALTER TABLE appointments DROP COLUMN visit_type_id;
DROP INDEX visit_types_department;
DROP TABLE visit_types;
