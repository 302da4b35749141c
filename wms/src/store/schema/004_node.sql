-- Which node this database belongs to: the cloud is node 0, each edge has
-- its own number. Records an edge creates are numbered in its range.
CREATE TABLE node (
    singleton  INTEGER PRIMARY KEY CHECK (singleton = 1),
    number     INTEGER NOT NULL CHECK (number >= 0),
    origin     TEXT NOT NULL
);
