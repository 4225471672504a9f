-- Button clicks (and, later, commands) are stored before the platform is
-- acknowledged and applied from storage, like messages: an acknowledged click
-- survives a crash. `delivery_id` drops a platform's redelivery; `claimed_by`
-- and `lease_until` are for several instances sharing one database (one
-- process leaves them NULL).
CREATE TABLE actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    room_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    received_at TEXT NOT NULL,
    processed INTEGER NOT NULL DEFAULT 0,
    claimed_by TEXT,
    lease_until TEXT,
    UNIQUE (platform, delivery_id)
);
CREATE INDEX actions_unprocessed ON actions (processed, id);
