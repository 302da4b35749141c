-- Events this node made are numbered without holes (out_seq): that is what
-- sync sends up and what the receiver checks for gaps. Events received from
-- other nodes are logged too (by their id, once) but have no out_seq, so
-- they are never sent back.
ALTER TABLE events ADD COLUMN out_seq INTEGER;
UPDATE events SET out_seq = (
    SELECT n FROM (SELECT seq AS s, ROW_NUMBER() OVER (ORDER BY seq) AS n FROM events) WHERE s = events.seq
);
CREATE UNIQUE INDEX events_by_out_seq ON events (out_seq) WHERE out_seq IS NOT NULL;

-- Events from other nodes that could not be applied (an illegal transition,
-- a reference to something unknown): kept, shown, never blocking the queue.
CREATE TABLE sync_conflicts (
    id           INTEGER PRIMARY KEY,
    business_id  INTEGER,
    event_id     TEXT NOT NULL UNIQUE,
    origin       TEXT NOT NULL,
    kind         TEXT NOT NULL,
    reason       TEXT NOT NULL,
    resolution   TEXT NOT NULL,
    at           TEXT NOT NULL
);
CREATE INDEX sync_conflicts_by_business ON sync_conflicts (business_id, id);
