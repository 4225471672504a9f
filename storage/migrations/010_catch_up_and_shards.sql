-- Several instances: what the others need to see.
-- A catch-up is held by a named lease ("catchup:slack", "catchup:discord:3").
-- `leases.work`: what the holder is doing, written with its token (a
-- catch-up: where each channel's and room's history is read from), so an
-- instance that takes over unfinished work starts from the same place;
-- cleared when the work is finished. `leases.finished`: the fencing token of
-- the claim whose holder released the lease having finished its work (0:
-- none did). An instance that found the lease held by another waits, and
-- takes the work over unless the latest claim finished it (`finished` =
-- `fence`): its holder died, or stopped half-way.
ALTER TABLE leases ADD COLUMN work TEXT;
ALTER TABLE leases ADD COLUMN finished INTEGER NOT NULL DEFAULT 0;
-- `instances.discord`: the Discord shard settings of an instance that runs
-- Discord, as JSON text ({"shard_count": 4, "shard_ids": [0, 1]}; a count of
-- null is one unsharded connection, no ids: every shard, or by lease); NULL
-- when it does not run Discord. Every instance checks them against the
-- others' (two counts in use, a shard fixed twice or by nobody).
ALTER TABLE instances ADD COLUMN discord TEXT
