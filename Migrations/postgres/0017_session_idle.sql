-- Web sessions end sooner than the API's (issue 55; Migrations/0026_session_idle.sql on SQLite): a
-- session may carry its own idle limit in seconds. NULL keeps the rule of its kind.

-- migrate:up
ALTER TABLE sessions ADD COLUMN idle_seconds integer CHECK (idle_seconds IS NULL OR idle_seconds > 0);
ALTER TABLE staff_sessions ADD COLUMN idle_seconds integer CHECK (idle_seconds IS NULL OR idle_seconds > 0);

-- migrate:down
ALTER TABLE staff_sessions DROP COLUMN idle_seconds;
ALTER TABLE sessions DROP COLUMN idle_seconds;
