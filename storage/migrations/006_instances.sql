-- Every `tribunal run` process sharing the database: registered at start,
-- `last_seen` renewed by its heartbeat, removed on a clean stop. An instance
-- whose `last_seen` is older than TRIBUNAL_LEASE_SECONDS counts as dead.
CREATE TABLE instances (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
CREATE INDEX outbox_claims ON outbox (room_id, status, claimed_by);
