-- Clinic time zones from time-zone boundaries. Until now a clinic's zone was that of the
-- nearest gazetteer city in its state, which is wrong near zone borders inside a state
-- (Vincennes IN keeps Eastern time, Tuba City AZ keeps daylight saving time). The program
-- recomputes every clinic's zone from Data/timezones.db right after this migration, in the
-- same transaction (SQL cannot), and records each clinic whose zone changed here, so that
-- `clinic admin check` can list the upcoming appointments booked before the change: their
-- instants are kept, but the local time the patient was shown has moved.
-- The geocode cache forgets what the old gazetteer answered: the new one answers first and
-- binds qualifiers ("Stowe, VT" was cached as Stow, Ohio).

-- migrate:up
CREATE TABLE clinic_zone_changes (
    id INTEGER PRIMARY KEY,
    clinic_id INTEGER NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    old_zone TEXT NOT NULL,
    new_zone TEXT NOT NULL,
    -- UTC seconds.
    changed_at INTEGER NOT NULL
);
CREATE INDEX clinic_zone_changes_clinic ON clinic_zone_changes (clinic_id, changed_at);
DELETE FROM geocode_cache WHERE source = 'gazetteer';

-- migrate:down
DROP TABLE clinic_zone_changes;
