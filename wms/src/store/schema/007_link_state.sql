-- Edge side: whether the daemon's link to the broker is up, written as it
-- changes, so tools that read the database see what the daemon sees.
ALTER TABLE sync_state ADD COLUMN connected INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_state ADD COLUMN connected_since TEXT;
