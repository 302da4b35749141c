-- Cloud side: the edges of each business, their node numbers, and how far
-- their logs have been applied here.
CREATE TABLE edges (
    business_id    INTEGER NOT NULL REFERENCES businesses (id),
    edge_id        TEXT NOT NULL,
    node           INTEGER NOT NULL UNIQUE CHECK (node > 0),
    name           TEXT,
    registered_at  TEXT NOT NULL,
    up_cursor      INTEGER NOT NULL DEFAULT 0,
    last_seen      TEXT,
    version        TEXT,
    PRIMARY KEY (business_id, edge_id)
) WITHOUT ROWID;

-- Edge side: what the cloud has acknowledged of this node's log, and the
-- last cloud rev applied here.
CREATE TABLE sync_state (
    singleton    INTEGER PRIMARY KEY CHECK (singleton = 1),
    acked        INTEGER NOT NULL DEFAULT 0,
    down_cursor  INTEGER NOT NULL DEFAULT 0,
    last_ack_at  TEXT
);
INSERT INTO sync_state (singleton) VALUES (1);

-- What the cloud sends an edge: its business's changes, in log order.
CREATE INDEX events_by_business ON events (business_id, seq);
