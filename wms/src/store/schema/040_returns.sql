-- Customer returns: an RMA for units of a dispatched order, and its lines
-- with the units graded so far. Numbered per node: a box authorises and
-- receives returns offline. Lines are known by their order line's number
-- within the return, on every node alike.
CREATE TABLE returns (
    id            INTEGER PRIMARY KEY,
    business_id   INTEGER NOT NULL REFERENCES businesses (id),
    order_id      INTEGER NOT NULL REFERENCES orders (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    status        TEXT NOT NULL CHECK (status IN ('open', 'receiving', 'received', 'cancelled')),
    reference     TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX returns_by_business ON returns (business_id, status, id);
CREATE INDEX returns_by_order ON returns (order_id, id);

CREATE TABLE return_lines (
    return_id  INTEGER NOT NULL REFERENCES returns (id),
    line_no    INTEGER NOT NULL,
    item_id    INTEGER NOT NULL REFERENCES items (id),
    quantity   INTEGER NOT NULL,
    reason     TEXT NOT NULL,
    note       TEXT,
    restocked  INTEGER NOT NULL DEFAULT 0,
    damaged    INTEGER NOT NULL DEFAULT 0,
    scrapped   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (return_id, line_no)
);

INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'returns', COUNT(*) FROM returns GROUP BY business_id;
CREATE TRIGGER returns_counted AFTER INSERT ON returns BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'returns', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'returns';
END;
