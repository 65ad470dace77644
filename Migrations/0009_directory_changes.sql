-- The directory's version (migration 8) counts every change to a clinic, not only a move:
-- the server keeps whole clinic rows beside its nearest-clinic index (a renamed clinic or a
-- corrected phone must not be served stale).

-- migrate:up
DROP TRIGGER clinics_moved;
CREATE TRIGGER clinics_changed AFTER UPDATE ON clinics
BEGIN UPDATE directory_version SET version = version + 1 WHERE id = 1; END;

-- migrate:down
DROP TRIGGER clinics_changed;
CREATE TRIGGER clinics_moved AFTER UPDATE OF lat, lon, is_pediatric, is_hospital ON clinics
BEGIN UPDATE directory_version SET version = version + 1 WHERE id = 1; END;
