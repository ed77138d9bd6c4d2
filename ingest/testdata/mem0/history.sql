-- mem0 OSS history (mem0/memory/storage.py); loaded into a fresh history.db by the tests.
CREATE TABLE IF NOT EXISTS history (
    id           TEXT PRIMARY KEY,
    memory_id    TEXT,
    old_memory   TEXT,
    new_memory   TEXT,
    event        TEXT,
    created_at   DATETIME,
    updated_at   DATETIME,
    is_deleted   INTEGER,
    actor_id     TEXT,
    role         TEXT
);
-- m-diet: added, then updated twice (the middle text comes back in the last update's old_memory)
INSERT INTO history VALUES ('h1', 'm-diet', NULL, 'Is vegetarian', 'ADD', '2025-01-03T10:00:00.123456-08:00', NULL, 0, 'alice', 'user');
INSERT INTO history VALUES ('h2', 'm-diet', 'Is vegetarian', 'Is vegan', 'UPDATE', '2025-02-03T10:00:00-08:00', '2025-02-03T10:00:00-08:00', 0, 'alice', 'user');
INSERT INTO history VALUES ('h3', 'm-diet', 'Is vegan', 'Is vegan and allergic to nuts', 'UPDATE', '2025-03-03T10:00:00-08:00', '2025-03-03T10:00:00-08:00', 0, NULL, 'user');
-- m-city: added then deleted: not imported
INSERT INTO history VALUES ('h4', 'm-city', NULL, 'Lives in Lisbon', 'ADD', '2025-01-04T09:00:00+00:00', NULL, 0, NULL, NULL);
INSERT INTO history VALUES ('h5', 'm-city', 'Lives in Lisbon', NULL, 'DELETE', '2025-01-05T09:00:00+00:00', NULL, 1, NULL, NULL);
-- m-tea: added once
INSERT INTO history VALUES ('h6', 'm-tea', NULL, 'Drinks green tea in the afternoon', 'ADD', '2025-01-06T15:30:00', NULL, 0, NULL, NULL);
-- m-bad: an ADD without text
INSERT INTO history VALUES ('h7', 'm-bad', NULL, '', 'ADD', '2025-01-07T00:00:00', NULL, 0, NULL, NULL);
