-- The cloud's (node 0's) ids of the tables numbered per node, from
-- sequences: writers of different businesses run side by side on
-- PostgreSQL, and two reading the largest id at once would both take the
-- one after it. A sequence hands each its own and never waits. They stay
-- in node 0's range (below 2^40); rows of edges' ranges arrive with their
-- ids and leave the sequences alone.
CREATE SEQUENCE waves_node_ids MAXVALUE 1099511627775;
CREATE SEQUENCE pick_lines_node_ids MAXVALUE 1099511627775;
CREATE SEQUENCE shipments_node_ids MAXVALUE 1099511627775;
CREATE SEQUENCE dispatch_runs_node_ids MAXVALUE 1099511627775;
CREATE SEQUENCE print_jobs_node_ids MAXVALUE 1099511627775;
SELECT setval('waves_node_ids', COALESCE((SELECT MAX(id) FROM waves WHERE id < 1099511627776), 0) + 1, false);
SELECT setval('pick_lines_node_ids', COALESCE((SELECT MAX(id) FROM pick_lines WHERE id < 1099511627776), 0) + 1, false);
SELECT setval('shipments_node_ids', COALESCE((SELECT MAX(id) FROM shipments WHERE id < 1099511627776), 0) + 1, false);
SELECT setval('dispatch_runs_node_ids', COALESCE((SELECT MAX(id) FROM dispatch_runs WHERE id < 1099511627776), 0) + 1, false);
SELECT setval('print_jobs_node_ids', COALESCE((SELECT MAX(id) FROM print_jobs WHERE id < 1099511627776), 0) + 1, false);
