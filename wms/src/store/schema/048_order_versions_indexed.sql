-- The order list's two most used indexes end with the order's version:
-- a page of orders by status (or of all orders) is then read from the
-- index alone, ids and versions, and only the orders whose JSON the list
-- does not hold at that version are read from the table (`store::orders::
-- list_json`). Finding each row of a page in the table was half of
-- SQLite's time on a page. The cost: an update of an order (its version
-- moves on every one) rewrites these two entries as well.
DROP INDEX orders_by_created;
CREATE INDEX orders_by_created ON orders (business_id, created_at, id, version);
DROP INDEX orders_by_status;
CREATE INDEX orders_by_status ON orders (business_id, status, created_at, id, version);
-- Dropping an index drops its statistics: gathered again here, so that
-- the planner goes on choosing the status index for a status filter.
ANALYZE orders;
