-- Cycle counts: locations a counter is sent to count, and the lines (item
-- and lot at a location) counted there. Numbered per node: a box makes
-- them offline. Lines are known by their location, item and lot ('' for
-- none) within the count, on every node alike.
CREATE TABLE counts (
    id                 INTEGER PRIMARY KEY,
    business_id        INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id       INTEGER NOT NULL REFERENCES warehouses (id),
    status             TEXT NOT NULL CHECK (status IN ('open', 'approved', 'cancelled')),
    blind              INTEGER NOT NULL,
    tolerance_units    INTEGER NOT NULL,
    tolerance_percent  INTEGER,
    scope              TEXT NOT NULL,
    item_ids           TEXT NOT NULL,
    reference          TEXT,
    created_by         TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    approved_by        TEXT,
    approved_at        TEXT
);
CREATE INDEX counts_by_status ON counts (business_id, warehouse_id, status, id);

CREATE TABLE count_locations (
    count_id   INTEGER NOT NULL REFERENCES counts (id),
    location   TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('open', 'recount', 'done')),
    closed_by  TEXT,
    PRIMARY KEY (count_id, location)
);
-- Whether a location is in another open count.
CREATE INDEX count_locations_by_location ON count_locations (location, count_id);

CREATE TABLE count_lines (
    count_id        INTEGER NOT NULL REFERENCES counts (id),
    location        TEXT NOT NULL,
    item_id         INTEGER NOT NULL REFERENCES items (id),
    lot             TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'counted', 'recount', 'final')),
    round           INTEGER NOT NULL,
    expected        INTEGER,
    counted         INTEGER,
    counted_by      TEXT,
    counted_at      TEXT,
    first_expected  INTEGER,
    first_counted   INTEGER,
    first_by        TEXT,
    PRIMARY KEY (count_id, location, item_id, lot)
);

-- When each location was last counted (an approved count), for "every
-- location not counted in N days".
ALTER TABLE locations ADD COLUMN counted_at TEXT;

INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'counts', COUNT(*) FROM counts GROUP BY business_id;
CREATE TRIGGER counts_counted AFTER INSERT ON counts BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'counts', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'counts';
END;
