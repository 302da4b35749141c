-- Locations as records, and stock held per location and lot.
--
-- A location is known by its code within its warehouse: stock_bins and
-- stock_movements name it by that code, so what a box books offline never
-- depends on which node made the record (ids are per node, codes are the
-- warehouse's). The code never changes once made.
CREATE TABLE locations (
    id              INTEGER PRIMARY KEY,
    business_id     INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id    INTEGER NOT NULL REFERENCES warehouses (id),
    code            TEXT NOT NULL,
    zone            TEXT,
    kind            TEXT NOT NULL CHECK (kind IN ('dock', 'bulk', 'pick', 'staging', 'returns', 'quarantine')),
    sequence        INTEGER,
    max_units       INTEGER,
    max_volume_cm3  INTEGER,
    max_weight_g    INTEGER,
    mixed_lots      INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (warehouse_id, code)
);
CREATE INDEX locations_by_business ON locations (business_id, warehouse_id, kind, code);

INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'locations', COUNT(*) FROM locations GROUP BY business_id;
CREATE TRIGGER locations_counted AFTER INSERT ON locations BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'locations', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'locations';
END;
CREATE TRIGGER locations_uncounted AFTER DELETE ON locations BEGIN
    UPDATE row_counts SET n = n - 1 WHERE business_id = OLD.business_id AND tbl = 'locations';
END;

-- On-hand per item, warehouse, location code ('' where a movement named
-- none and the item had no location of its own) and lot ('' for none).
-- The sum over a warehouse's bins is its stock_levels.on_hand.
CREATE TABLE stock_bins (
    item_id       INTEGER NOT NULL REFERENCES items (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    location      TEXT NOT NULL,
    lot           TEXT NOT NULL,
    business_id   INTEGER NOT NULL,
    on_hand       INTEGER NOT NULL,
    PRIMARY KEY (item_id, warehouse_id, location, lot)
) WITHOUT ROWID;
CREATE INDEX stock_bins_by_location ON stock_bins (warehouse_id, location);

-- Movements that named no location were of the item's own bin: they say
-- so now, as every movement from here on names its location.
UPDATE stock_movements SET location = (
    SELECT l.location FROM item_locations l
    WHERE l.item_id = stock_movements.item_id AND l.warehouse_id = stock_movements.warehouse_id)
WHERE location IS NULL;

INSERT INTO stock_bins (item_id, warehouse_id, location, lot, business_id, on_hand)
SELECT item_id, warehouse_id, COALESCE(location, ''), COALESCE(lot, ''), MIN(business_id), SUM(delta)
FROM stock_movements GROUP BY item_id, warehouse_id, COALESCE(location, ''), COALESCE(lot, '');
