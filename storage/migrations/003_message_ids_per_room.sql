-- A message id is unique within its room, not across the database: replay
-- transcripts reuse ids like m1 (Slack and Discord ids stay unique anyway).
CREATE TABLE messages_v3 (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    message_id TEXT NOT NULL,
    room_id TEXT NOT NULL,
    author TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    ts TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    turn_no INTEGER,
    processed INTEGER NOT NULL DEFAULT 1,
    UNIQUE (platform, room_id, message_id)
);
INSERT INTO messages_v3 (seq, platform, message_id, room_id, author, role, text, ts, epoch,
    turn_no, processed)
    SELECT seq, platform, message_id, room_id, author, role, text, ts, epoch, turn_no, processed
    FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v3 RENAME TO messages;
CREATE INDEX messages_by_room_role ON messages (room_id, role, seq);
CREATE INDEX messages_by_room_turn ON messages (room_id, turn_no);
CREATE INDEX messages_unprocessed ON messages (processed) WHERE processed = 0;
