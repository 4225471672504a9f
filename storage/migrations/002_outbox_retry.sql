-- Outbox retries back off instead of counting down attempts, and per-room lookups.
ALTER TABLE outbox ADD COLUMN next_attempt_at TEXT;
CREATE INDEX outbox_by_room ON outbox (room_id, status, id);
-- Messages stored before their turn was judged (see the engine's ingest path).
ALTER TABLE messages ADD COLUMN processed INTEGER NOT NULL DEFAULT 1;
CREATE INDEX messages_unprocessed ON messages (processed) WHERE processed = 0;
