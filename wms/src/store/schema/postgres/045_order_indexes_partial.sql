-- The two wave indexes of orders as partial indexes: see the SQLite
-- migration of the same number.
DROP INDEX orders_unwaved;
CREATE INDEX orders_unwaved ON orders (business_id, warehouse_id, created_at, id)
    WHERE status = 'confirmed' AND wave_id IS NULL;
DROP INDEX orders_by_wave;
CREATE INDEX orders_by_wave ON orders (wave_id, status) WHERE wave_id IS NOT NULL;
