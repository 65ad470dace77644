-- Confirmation codes counted (issue 55; Migrations/0023_send_counts.sql on SQLite): a code
-- texted or e-mailed is counted under several keys (the account, the client's network, the
-- destination's keyed hash, the deployment's daily budget) in fixed windows, across servers.

-- migrate:up
CREATE TABLE send_counts (
    key text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    count integer NOT NULL CHECK (count >= 1)
);
CREATE INDEX send_counts_window ON send_counts (window_start);

-- migrate:down
DROP TABLE send_counts;
