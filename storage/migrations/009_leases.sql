-- Named leases: one piece of work that one instance at a time may hold, such
-- as Discord's gateway connection ("discord:gateway") or one of its shards
-- ("discord:shard:3"). A claim is a compare-and-set that succeeds when nobody
-- else holds a live lease (it ran out, or its holder is no longer a
-- registered instance) and adds one to `fence`, the fencing token; renewals
-- and releases carry the token and change nothing once another instance has
-- claimed the lease since. A row stays when its lease is released, so the
-- next claim still gets a newer token.
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    holder TEXT,
    lease_until TEXT,
    fence INTEGER NOT NULL DEFAULT 0
)
