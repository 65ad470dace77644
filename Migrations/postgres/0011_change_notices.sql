-- Notices of what ends or changes a signed-in session, or moves the directory's or the
-- schedule's version (issue 44): a server keeps the sessions and the nearest searches' facts it
-- has looked up (PostgresStore+KeptLookups.swift) and listens on the channel `clinic_changes`;
-- each change that must reach it is sent there by these triggers, whoever makes it (another
-- server, the CLI, SQL by hand), when its transaction commits:
--   'p' || token hash   a patient's session ended (sign-out, another device signed out, a
--                       password change, the account deleted);
--   's' || token hash   a staff session ended;
--   'c' || client id    a patient's row changed or went (the profile, the password, the consent);
--   'a' || staff id     a staff account changed or went (disabled);
--   'd'                 the directory's or the schedule's version moved (a clinic, department,
--                       doctor or weekly hours changed: migrations 8 and 10);
--   '*'                 the personal-data key check written (`encryption.key_check`: a key
--                       rotated), or one of these tables emptied: every kept session is
--                       forgotten.
-- A session's use (`last_used_at`) and a new session send nothing.
-- migrate:up
CREATE FUNCTION version_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('clinic_changes', 'd');
    RETURN NULL;
END;
$$;
CREATE TRIGGER directory_version_notice AFTER UPDATE ON directory_version FOR EACH STATEMENT EXECUTE FUNCTION version_notice();
CREATE TRIGGER schedule_version_notice AFTER UPDATE ON schedule_version FOR EACH STATEMENT EXECUTE FUNCTION version_notice();
CREATE FUNCTION session_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' OR TG_TABLE_NAME = 'settings' THEN
        PERFORM pg_notify('clinic_changes', '*');
    ELSIF TG_TABLE_NAME = 'sessions' THEN
        PERFORM pg_notify('clinic_changes', 'p' || OLD.token_hash);
    ELSIF TG_TABLE_NAME = 'staff_sessions' THEN
        PERFORM pg_notify('clinic_changes', 's' || OLD.token_hash);
    ELSIF TG_TABLE_NAME = 'clients' THEN
        PERFORM pg_notify('clinic_changes', 'c' || OLD.id);
    ELSIF TG_TABLE_NAME = 'staff_accounts' THEN
        PERFORM pg_notify('clinic_changes', 'a' || OLD.id);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER sessions_notice AFTER DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION session_notice();
CREATE TRIGGER staff_sessions_notice AFTER DELETE ON staff_sessions FOR EACH ROW EXECUTE FUNCTION session_notice();
CREATE TRIGGER clients_notice AFTER UPDATE OR DELETE ON clients FOR EACH ROW EXECUTE FUNCTION session_notice();
CREATE TRIGGER staff_accounts_notice AFTER UPDATE OR DELETE ON staff_accounts FOR EACH ROW EXECUTE FUNCTION session_notice();
CREATE TRIGGER settings_written_notice AFTER INSERT OR UPDATE ON settings
    FOR EACH ROW WHEN (NEW.key = 'encryption.key_check') EXECUTE FUNCTION session_notice();
CREATE TRIGGER settings_deleted_notice AFTER DELETE ON settings
    FOR EACH ROW WHEN (OLD.key = 'encryption.key_check') EXECUTE FUNCTION session_notice();
CREATE TRIGGER settings_emptied_notice AFTER TRUNCATE ON settings FOR EACH STATEMENT EXECUTE FUNCTION session_notice();
CREATE TRIGGER sessions_emptied_notice AFTER TRUNCATE ON sessions FOR EACH STATEMENT EXECUTE FUNCTION session_notice();
CREATE TRIGGER staff_sessions_emptied_notice AFTER TRUNCATE ON staff_sessions FOR EACH STATEMENT EXECUTE FUNCTION session_notice();
CREATE TRIGGER clients_emptied_notice AFTER TRUNCATE ON clients FOR EACH STATEMENT EXECUTE FUNCTION session_notice();
CREATE TRIGGER staff_accounts_emptied_notice AFTER TRUNCATE ON staff_accounts FOR EACH STATEMENT EXECUTE FUNCTION session_notice();
-- migrate:down
DROP TRIGGER staff_accounts_emptied_notice ON staff_accounts;
DROP TRIGGER clients_emptied_notice ON clients;
DROP TRIGGER staff_sessions_emptied_notice ON staff_sessions;
DROP TRIGGER sessions_emptied_notice ON sessions;
DROP TRIGGER settings_emptied_notice ON settings;
DROP TRIGGER settings_deleted_notice ON settings;
DROP TRIGGER settings_written_notice ON settings;
DROP TRIGGER staff_accounts_notice ON staff_accounts;
DROP TRIGGER clients_notice ON clients;
DROP TRIGGER staff_sessions_notice ON staff_sessions;
DROP TRIGGER sessions_notice ON sessions;
DROP FUNCTION session_notice();
DROP TRIGGER schedule_version_notice ON schedule_version;
DROP TRIGGER directory_version_notice ON directory_version;
DROP FUNCTION version_notice();
