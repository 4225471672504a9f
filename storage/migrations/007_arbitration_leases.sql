-- Leases with fencing tokens on arbitrations, for several instances sharing
-- one database. An instance claims an arbitration before running it
-- (`claimed_by`, until `lease_until`, renewed while the model thinks) and
-- every claim adds one to `fence`; the claimer's writes of that arbitration
-- carry the token and change nothing once another instance has claimed it
-- since (its lease ran out, or its instance is gone).
ALTER TABLE arbitrations ADD COLUMN claimed_by TEXT;
ALTER TABLE arbitrations ADD COLUMN lease_until TEXT;
ALTER TABLE arbitrations ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;
-- Pacing of platform calls shared by every instance: the next free moment
-- (milliseconds since the epoch) of one paced thing, e.g. one method's calls
-- into one channel.
CREATE TABLE pacing (
    key TEXT PRIMARY KEY,
    next_ms INTEGER NOT NULL
);
