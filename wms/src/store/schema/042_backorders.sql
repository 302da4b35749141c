-- Orders sold beyond their channel's figure, and the units every pending
-- order has sold but not reserved.
--
-- `stock_levels.pending`: the units of an item that pending orders of the
-- warehouse hold (added when an order is stored pending, taken off when it
-- leaves pending). A channel's figure counts them as sold, so two
-- channels cannot both sell the last unit while its orders wait to be
-- confirmed.
--
-- `orders.oversold`: the order came for more than its channel was told it
-- could sell. `waiting_since` and `backorder_lines` (JSON: the lines short
-- at arrival) while it waits for stock as a backorder; cleared when it
-- leaves pending. `split_from`: the order whose units in stock shipped
-- while this rest waited.
ALTER TABLE stock_levels ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
INSERT INTO stock_levels (item_id, warehouse_id, business_id, pending)
    SELECT ol.item_id, o.warehouse_id, o.business_id, SUM(ol.quantity)
    FROM order_lines ol JOIN orders o ON o.id = ol.order_id
    WHERE o.status = 'pending'
    GROUP BY ol.item_id, o.warehouse_id, o.business_id
    ON CONFLICT (item_id, warehouse_id) DO UPDATE SET pending = excluded.pending;

ALTER TABLE orders ADD COLUMN oversold INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN waiting_since TEXT;
ALTER TABLE orders ADD COLUMN backorder_lines TEXT;
ALTER TABLE orders ADD COLUMN split_from INTEGER;
-- The backorders of a warehouse in order of arrival; a few rows at most.
CREATE INDEX orders_waiting ON orders (business_id, warehouse_id, waiting_since, id)
    WHERE waiting_since IS NOT NULL;
