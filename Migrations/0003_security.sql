-- Security: failed log-ins per login name, shared by every process, for throttling.

-- migrate:up
CREATE TABLE login_attempts (
    -- The folded login name as typed, whether or not such a patient exists.
    login_key TEXT PRIMARY KEY,
    failures INTEGER NOT NULL CHECK (failures >= 1),
    -- UTC seconds of the first failure of the current window.
    first_failure_at INTEGER NOT NULL
);

-- migrate:down
DROP TABLE login_attempts;
