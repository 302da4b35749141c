-- The two wave indexes of orders hold only the rows their one query each
-- reads: confirmed orders waiting for a wave (`store::picking::
-- waiting_orders`), and the orders of a wave. A new order is pending and
-- in no wave, so creating one no longer writes an entry in either (two of
-- the nine index entries an order insert wrote).
DROP INDEX orders_unwaved;
CREATE INDEX orders_unwaved ON orders (business_id, warehouse_id, created_at, id)
    WHERE status = 'confirmed' AND wave_id IS NULL;
DROP INDEX orders_by_wave;
CREATE INDEX orders_by_wave ON orders (wave_id, status) WHERE wave_id IS NOT NULL;
