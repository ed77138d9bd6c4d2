-- mem0's first history schema (before old_memory/new_memory), still found in older ~/.mem0/history.db files.
CREATE TABLE IF NOT EXISTS history (
    id TEXT PRIMARY KEY,
    memory_id TEXT,
    prev_value TEXT,
    new_value TEXT,
    event TEXT,
    timestamp DATETIME,
    is_deleted INTEGER
);
INSERT INTO history VALUES ('o1', 'm-lang', NULL, 'Codes in Python', 'ADD', '2024-08-01T10:00:00', 0);
INSERT INTO history VALUES ('o2', 'm-lang', 'Codes in Python', 'Codes in Python and Go', 'UPDATE', '2024-09-01T10:00:00', 0);
