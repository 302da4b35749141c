-- A stock movement's item and warehouse are no longer checked against
-- their tables on every row. Each check was a locking read (`SELECT … FOR
-- KEY SHARE` on the item's and the warehouse's rows, through a trigger),
-- a movement a row: without them an edge's backlog drains into the cloud
-- 12-14 % faster (docs/benchmarks.md). Nothing is lost by it: items and
-- warehouses are never deleted, every movement is booked with its level in
-- the same transaction, and `stock_levels` keeps both keys checked, so a
-- movement of an item or warehouse that does not exist cannot commit;
-- what a caller names is checked first anyway (its business's items, an
-- edge's events against its sender's). SQLite keeps the keys: its check
-- is an index probe that locks nothing (see the SQLite migration of the
-- same number).
ALTER TABLE stock_movements
    DROP CONSTRAINT IF EXISTS stock_movements_item_id_fkey,
    DROP CONSTRAINT IF EXISTS stock_movements_warehouse_id_fkey;
