-- The order list's two most used indexes end with the order's version:
-- see the SQLite migration of the same number. Here the page's ids and
-- versions come from the index alone where the table's pages are marked
-- all visible (by vacuum), and from the heap otherwise, as before. What
-- it costs: an update that changed no other indexed column (a new
-- address, a split's total) is no longer heap-only (HOT), since the
-- version it moves is indexed now. A status change, the common update,
-- was never heap-only: the status is indexed.
DROP INDEX orders_by_created;
CREATE INDEX orders_by_created ON orders (business_id, created_at, id, version);
DROP INDEX orders_by_status;
CREATE INDEX orders_by_status ON orders (business_id, status, created_at, id, version);
ANALYZE orders;
