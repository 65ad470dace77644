-- The schedule's version (issue 44): a server keeps each department's schedule (the department,
-- its clinic, its active doctors and their weekly hours) between requests, and a slots request
-- reads this version in the same statement as the day's exceptions and taken times. A kept
-- schedule of an older version is read again, so a change made by any server or by the CLI is
-- seen by the next request everywhere, without a notice having to arrive. The version is
-- bumped by a trigger on each table the kept schedule is read from, once per statement, to at
-- least the clock's microseconds: it never goes back, even in a database made again from a
-- copy, so a server's kept version of another database can never match by chance.
-- migrate:up
CREATE TABLE schedule_version (
    id smallint PRIMARY KEY CHECK (id = 1),
    version bigint NOT NULL
);
INSERT INTO schedule_version (id, version) VALUES (1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
CREATE FUNCTION schedule_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE schedule_version SET version = greatest(version + 1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint)
    WHERE id = 1;
    RETURN NULL;
END;
$$;
CREATE TRIGGER clinics_schedule_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON clinics
    FOR EACH STATEMENT EXECUTE FUNCTION schedule_changed();
CREATE TRIGGER departments_schedule_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON departments
    FOR EACH STATEMENT EXECUTE FUNCTION schedule_changed();
CREATE TRIGGER doctors_schedule_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON doctors
    FOR EACH STATEMENT EXECUTE FUNCTION schedule_changed();
CREATE TRIGGER working_hours_schedule_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON working_hours
    FOR EACH STATEMENT EXECUTE FUNCTION schedule_changed();
-- migrate:down
DROP TRIGGER working_hours_schedule_changed ON working_hours;
DROP TRIGGER doctors_schedule_changed ON doctors;
DROP TRIGGER departments_schedule_changed ON departments;
DROP TRIGGER clinics_schedule_changed ON clinics;
DROP FUNCTION schedule_changed();
DROP TABLE schedule_version;
