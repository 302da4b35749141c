-- Replenishment: a pick location's min and max of an item, and the tasks
-- that refill it from reserve. Tasks are numbered per node: a box makes
-- them offline, as what leaves its pick faces takes them below their min.
CREATE TABLE replenish_levels (
    business_id   INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    location      TEXT NOT NULL,
    item_id       INTEGER NOT NULL REFERENCES items (id),
    min           INTEGER NOT NULL,
    max           INTEGER NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (warehouse_id, location, item_id)
);
CREATE INDEX replenish_levels_by_business ON replenish_levels (business_id, warehouse_id, location);

CREATE TABLE replenish_tasks (
    id             INTEGER PRIMARY KEY,
    business_id    INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id   INTEGER NOT NULL REFERENCES warehouses (id),
    item_id        INTEGER NOT NULL REFERENCES items (id),
    lot            TEXT,
    expiry         TEXT,
    from_location  TEXT NOT NULL,
    to_location    TEXT NOT NULL,
    quantity       INTEGER NOT NULL,
    moved          INTEGER NOT NULL DEFAULT 0,
    status         TEXT NOT NULL CHECK (status IN ('open', 'done')),
    reference      TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX replenish_tasks_by_status ON replenish_tasks (business_id, warehouse_id, status, id);
-- Whether a pick location has an open task for an item already.
CREATE INDEX replenish_tasks_by_target ON replenish_tasks (warehouse_id, to_location, item_id, status);

INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'replenish_tasks', COUNT(*) FROM replenish_tasks GROUP BY business_id;
CREATE TRIGGER replenish_tasks_counted AFTER INSERT ON replenish_tasks BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'replenish_tasks', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'replenish_tasks';
END;
