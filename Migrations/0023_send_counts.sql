-- Confirmation codes counted (issue 55): a code texted or e-mailed is counted under several
-- keys (the account, the client's network, the destination's keyed hash, the deployment's
-- daily budget) in fixed windows, so that nobody can run texts up to premium numbers or flood
-- a phone. `key` holds no personal value: a destination and a network address are hashed.

-- migrate:up
CREATE TABLE send_counts (
    key TEXT PRIMARY KEY,
    window_start INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 1)
);
CREATE INDEX send_counts_window ON send_counts (window_start);

-- migrate:down
DROP TABLE send_counts;
