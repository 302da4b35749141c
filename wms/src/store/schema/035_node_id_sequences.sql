-- Nothing on SQLite: one transaction writes the file at a time, and the
-- tables numbered per node take the next id one past their largest in
-- the node's range (store/ids.rs). On PostgreSQL, where writers of
-- different businesses run side by side, the cloud's range is numbered by
-- sequences instead (postgres/035_node_id_sequences.sql).
SELECT 1;
