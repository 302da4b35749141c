-- The conflicts list pages like every other list (a cursor, and
-- recordsTotal from row_counts rather than a count of the business's
-- conflicts on every page). Conflicts of no business are not counted.
INSERT INTO row_counts (business_id, tbl, n)
    SELECT business_id, 'sync_conflicts', COUNT(*) FROM sync_conflicts
    WHERE business_id IS NOT NULL GROUP BY business_id;

CREATE TRIGGER sync_conflicts_counted AFTER INSERT ON sync_conflicts
WHEN NEW.business_id IS NOT NULL BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'sync_conflicts', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'sync_conflicts';
END;
CREATE TRIGGER sync_conflicts_uncounted AFTER DELETE ON sync_conflicts
WHEN OLD.business_id IS NOT NULL BEGIN
    UPDATE row_counts SET n = n - 1 WHERE business_id = OLD.business_id AND tbl = 'sync_conflicts';
END;
