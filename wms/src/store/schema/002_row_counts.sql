-- Rows per business of each listed table, kept exact by triggers in the
-- writing transaction, so a list's recordsTotal is one lookup instead of a
-- count over every row of the business.
CREATE TABLE row_counts (
    business_id  INTEGER NOT NULL,
    tbl          TEXT NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (business_id, tbl)
) WITHOUT ROWID;

INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'orders', COUNT(*) FROM orders GROUP BY business_id;
INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'items', COUNT(*) FROM items GROUP BY business_id;
INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'stock_levels', COUNT(*) FROM stock_levels GROUP BY business_id;

CREATE TRIGGER orders_counted AFTER INSERT ON orders BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'orders', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'orders';
END;
CREATE TRIGGER orders_uncounted AFTER DELETE ON orders BEGIN
    UPDATE row_counts SET n = n - 1 WHERE business_id = OLD.business_id AND tbl = 'orders';
END;
CREATE TRIGGER items_counted AFTER INSERT ON items BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'items', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'items';
END;
CREATE TRIGGER items_uncounted AFTER DELETE ON items BEGIN
    UPDATE row_counts SET n = n - 1 WHERE business_id = OLD.business_id AND tbl = 'items';
END;
CREATE TRIGGER stock_levels_counted AFTER INSERT ON stock_levels BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'stock_levels', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'stock_levels';
END;
CREATE TRIGGER stock_levels_uncounted AFTER DELETE ON stock_levels BEGIN
    UPDATE row_counts SET n = n - 1 WHERE business_id = OLD.business_id AND tbl = 'stock_levels';
END;
