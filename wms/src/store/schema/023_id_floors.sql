-- Edge side: where a node-allocated id table numbers from while the node's
-- log is not known whole (a restore, a new box). Records of the lost
-- stretch come back with the ids they were given, just past the backup's
-- largest, so what is made meanwhile numbers from well above them. Cleared
-- when the log is whole again: by then the largest id is past the floor.
CREATE TABLE id_floors (
    tbl   TEXT PRIMARY KEY,
    floor INTEGER NOT NULL
) WITHOUT ROWID;
