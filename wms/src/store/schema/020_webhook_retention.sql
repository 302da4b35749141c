-- Finished deliveries are deleted once older than the retention period:
-- oldest first, a batch at a time, found through this index instead of a
-- scan of every delivery.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at)
    WHERE finished_at IS NOT NULL;
