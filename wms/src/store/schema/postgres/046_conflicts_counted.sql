-- Conflicts counted per business: see the SQLite migration of the same
-- number.
INSERT INTO row_counts (business_id, tbl, n)
    SELECT business_id, 'sync_conflicts', COUNT(*) FROM sync_conflicts
    WHERE business_id IS NOT NULL GROUP BY business_id;

CREATE TRIGGER sync_conflicts_counted AFTER INSERT ON sync_conflicts
    FOR EACH ROW WHEN (NEW.business_id IS NOT NULL) EXECUTE FUNCTION row_counted();
CREATE TRIGGER sync_conflicts_uncounted AFTER DELETE ON sync_conflicts
    FOR EACH ROW WHEN (OLD.business_id IS NOT NULL) EXECUTE FUNCTION row_uncounted();
