-- City keys again: the folding of city names for case- and accent-insensitive matching
-- changed after version 1 ("-", "_" and "." now separate or vanish: "Sedro-Woolley" matches
-- "sedro woolley", "St. Albans" matches "st albans"). The program recomputes every
-- clinics.city_key right after this migration, in the same transaction: SQL cannot fold.
-- Its index is rebuilt so that the new keys are what it holds.

-- migrate:up
REINDEX clinics_city_key;

-- migrate:down
REINDEX clinics_city_key;
