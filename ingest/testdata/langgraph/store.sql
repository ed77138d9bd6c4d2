-- LangGraph's PostgresStore table (langgraph/store/postgres/base.py migrations), and rows as LangMem writes them.
CREATE TABLE IF NOT EXISTS store (
    prefix text NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key)
);
CREATE INDEX IF NOT EXISTS store_prefix_idx ON store USING btree (prefix text_pattern_ops);
ALTER TABLE store ADD COLUMN IF NOT EXISTS expires_at TIMESTAMP WITH TIME ZONE;
ALTER TABLE store ADD COLUMN IF NOT EXISTS ttl_minutes INT;
CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at) WHERE expires_at IS NOT NULL;

INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) VALUES
 ('memories.user-123', 'a1f0', '{"kind": "Memory", "content": {"content": "Prefers short answers"}}', '2025-06-01T10:00:00Z', '2025-06-02T10:00:00Z', NULL, NULL),
 ('memories.user-123', 'b2e1', '{"content": "Works night shifts"}', '2025-06-01T11:00:00Z', '2025-06-01T11:00:00Z', '2999-01-01T00:00:00Z', 60),
 ('memories.user-123', 'c3d2', '{"content": "Asked about a one-off coupon"}', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z', '2020-01-02T00:00:00Z', 1440),
 ('profiles.user-123', 'profile', '{"kind": "UserProfile", "content": {"name": "Ann", "timezone": "Europe/Lisbon"}}', '2025-06-01T12:00:00Z', '2025-06-01T12:00:00Z', NULL, NULL),
 ('a.b.c.d.e.f.g.h', 'deep', '{"content": "too deep for a namespace"}', '2025-06-01T12:00:00Z', '2025-06-01T12:00:00Z', NULL, NULL);
