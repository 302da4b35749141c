-- Putaway: goods received at a dock or staging location, to be moved to
-- where they are kept. Numbered per node: a box makes them offline.
CREATE TABLE putaway_tasks (
    id             INTEGER PRIMARY KEY,
    business_id    INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id   INTEGER NOT NULL REFERENCES warehouses (id),
    item_id        INTEGER NOT NULL REFERENCES items (id),
    lot            TEXT,
    expiry         TEXT,
    from_location  TEXT NOT NULL,
    suggested      TEXT,
    quantity       INTEGER NOT NULL,
    put            INTEGER NOT NULL DEFAULT 0,
    status         TEXT NOT NULL CHECK (status IN ('open', 'done')),
    reference      TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX putaway_tasks_by_status ON putaway_tasks (business_id, warehouse_id, status, id);

INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'putaway_tasks', COUNT(*) FROM putaway_tasks GROUP BY business_id;
CREATE TRIGGER putaway_tasks_counted AFTER INSERT ON putaway_tasks BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'putaway_tasks', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'putaway_tasks';
END;
