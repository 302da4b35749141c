-- Releases of the software, published in the cloud and synced down to
-- every edge so the box can show what changed and what it runs.
CREATE TABLE releases (
    id            INTEGER PRIMARY KEY,
    version       TEXT NOT NULL UNIQUE,
    title         TEXT NOT NULL,
    notes         TEXT NOT NULL,
    published_at  TEXT NOT NULL
);
CREATE INDEX releases_by_time ON releases (published_at, id);
