-- Backorders and pending units (see SQLite's 042).
ALTER TABLE stock_levels ADD COLUMN pending BIGINT NOT NULL DEFAULT 0;
INSERT INTO stock_levels (item_id, warehouse_id, business_id, pending)
    SELECT ol.item_id, o.warehouse_id, o.business_id, SUM(ol.quantity)
    FROM order_lines ol JOIN orders o ON o.id = ol.order_id
    WHERE o.status = 'pending'
    GROUP BY ol.item_id, o.warehouse_id, o.business_id
    ON CONFLICT (item_id, warehouse_id) DO UPDATE SET pending = excluded.pending;

ALTER TABLE orders ADD COLUMN oversold BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN waiting_since TEXT;
ALTER TABLE orders ADD COLUMN backorder_lines TEXT;
ALTER TABLE orders ADD COLUMN split_from BIGINT;
-- The backorders of a warehouse in order of arrival; a few rows at most.
CREATE INDEX orders_waiting ON orders (business_id, warehouse_id, waiting_since, id)
    WHERE waiting_since IS NOT NULL;
