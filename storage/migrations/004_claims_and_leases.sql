-- Claims and leases for several instances sharing one database: an incoming
-- event (a stored message) or a post is worked on by the instance that
-- claimed it until its lease runs out; then another may take it over. One
-- process leaves them NULL (its room locks and outbox order are enough).
ALTER TABLE messages ADD COLUMN claimed_by TEXT;
ALTER TABLE messages ADD COLUMN lease_until TEXT;
ALTER TABLE outbox ADD COLUMN claimed_by TEXT;
ALTER TABLE outbox ADD COLUMN lease_until TEXT;
