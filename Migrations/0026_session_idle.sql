-- Web sessions end sooner than the API's (issue 55): a session may carry its own idle limit in
-- seconds (a patient's web session 30 minutes unless "keep me signed in", a staff member's web
-- session 15 minutes). NULL keeps the rule of its kind (`SessionManager.idleLimit` for patients'
-- API and CLI tokens, `StaffController.idleLimit` for staff's).

-- migrate:up
ALTER TABLE sessions ADD COLUMN idle_seconds INTEGER CHECK (idle_seconds IS NULL OR idle_seconds > 0);
ALTER TABLE staff_sessions ADD COLUMN idle_seconds INTEGER CHECK (idle_seconds IS NULL OR idle_seconds > 0);

-- migrate:down
ALTER TABLE staff_sessions DROP COLUMN idle_seconds;
ALTER TABLE sessions DROP COLUMN idle_seconds;
