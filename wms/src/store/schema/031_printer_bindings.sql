-- Edge side: which printer record each configured device prints for, by
-- id. A device finds its record by name once; a rename in the cloud then
-- keeps it printing, where a match by name would lose it.
CREATE TABLE printer_bindings (
    device       TEXT PRIMARY KEY,
    business_id  INTEGER NOT NULL,
    printer_id   INTEGER NOT NULL REFERENCES printers (id),
    bound_at     TEXT NOT NULL
) WITHOUT ROWID;
