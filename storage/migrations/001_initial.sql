-- Tribunal schema v1. Migrations are forward-only: never edit a shipped file.
CREATE TABLE rooms (
    id TEXT PRIMARY KEY,
    platform TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread TEXT,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL
);
CREATE INDEX rooms_by_channel ON rooms (platform, channel, last_activity_at);

CREATE TABLE messages (
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
    UNIQUE (platform, message_id)
);
CREATE INDEX messages_by_room_role ON messages (room_id, role, seq);
CREATE INDEX messages_by_room_turn ON messages (room_id, turn_no);

CREATE TABLE bindings (
    platform TEXT NOT NULL,
    channel TEXT NOT NULL,
    role TEXT NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (platform, channel, role, user_id)
);

CREATE TABLE settings (
    scope TEXT NOT NULL,
    scope_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, scope_id, key)
);

CREATE TABLE arbitrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    room_id TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    trigger TEXT NOT NULL,
    evidence TEXT NOT NULL,
    status TEXT NOT NULL,
    progress_outbox_id INTEGER,
    prompt_chars INTEGER,
    backend TEXT,
    model TEXT,
    raw_output TEXT,
    model_verdict TEXT,
    verdict TEXT,
    source TEXT,
    verdict_text TEXT,
    options TEXT,
    overrides TEXT,
    latency_ms INTEGER,
    created_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX arbitrations_by_room ON arbitrations (room_id, id);
CREATE INDEX arbitrations_by_status ON arbitrations (status);

CREATE TABLE escalations (
    id INTEGER PRIMARY KEY,
    room_id TEXT NOT NULL,
    options TEXT NOT NULL,
    allowed TEXT NOT NULL,
    requester TEXT,
    status TEXT NOT NULL,
    verdict_outbox_id INTEGER,
    answer_option INTEGER,
    answer_label TEXT,
    answer_text TEXT,
    answer_kind TEXT,
    answered_by TEXT,
    answered_at TEXT,
    reminded_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX escalations_by_status ON escalations (status, created_at);

CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    platform TEXT NOT NULL,
    channel TEXT NOT NULL,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    scope TEXT NOT NULL,
    before TEXT,
    after TEXT
);
CREATE INDEX audit_by_channel ON audit_log (platform, channel, id);

CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    room_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    edit_of INTEGER,
    status TEXT NOT NULL,
    platform_message_id TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT
);
CREATE INDEX outbox_by_status ON outbox (status, id);
