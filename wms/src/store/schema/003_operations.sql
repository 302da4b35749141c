-- Warehouse operations: lots, receiving, waves and picking, shipments,
-- tracking, dispatch runs, printers and documents.

-- Lot-tracked items are received, picked and shipped by lot.
ALTER TABLE items ADD COLUMN lot_tracked INTEGER NOT NULL DEFAULT 0;

ALTER TABLE stock_movements ADD COLUMN lot TEXT;
ALTER TABLE stock_movements ADD COLUMN expiry TEXT;

-- On-hand per lot of lot-tracked items: the sum of their movements by lot.
CREATE TABLE stock_lots (
    item_id       INTEGER NOT NULL REFERENCES items (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    lot           TEXT NOT NULL,
    business_id   INTEGER NOT NULL,
    expiry        TEXT,
    on_hand       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (item_id, warehouse_id, lot)
) WITHOUT ROWID;

ALTER TABLE orders ADD COLUMN carrier TEXT NOT NULL DEFAULT 'own';
ALTER TABLE orders ADD COLUMN service TEXT NOT NULL DEFAULT 'standard';
ALTER TABLE orders ADD COLUMN wave_id INTEGER;
CREATE INDEX orders_unwaved ON orders (business_id, warehouse_id, status, wave_id, created_at, id);
CREATE INDEX orders_by_wave ON orders (wave_id, status);

-- Inbound (purchase) orders and what arrived against them.
CREATE TABLE inbound_orders (
    id            INTEGER PRIMARY KEY,
    business_id   INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    reference     TEXT NOT NULL,
    supplier      TEXT NOT NULL,
    status        TEXT NOT NULL,
    expected_at   TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (business_id, reference)
);
CREATE INDEX inbound_orders_by_status ON inbound_orders (business_id, status, id);

CREATE TABLE inbound_lines (
    inbound_id  INTEGER NOT NULL REFERENCES inbound_orders (id),
    line_no     INTEGER NOT NULL,
    item_id     INTEGER NOT NULL REFERENCES items (id),
    expected    INTEGER NOT NULL,
    accepted    INTEGER NOT NULL DEFAULT 0,
    rejected    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (inbound_id, line_no)
) WITHOUT ROWID;

CREATE TABLE receptions (
    id           INTEGER PRIMARY KEY,
    business_id  INTEGER NOT NULL,
    inbound_id   INTEGER NOT NULL REFERENCES inbound_orders (id),
    item_id      INTEGER NOT NULL REFERENCES items (id),
    scanned      TEXT NOT NULL,
    accepted     INTEGER NOT NULL,
    rejected     INTEGER NOT NULL,
    reason       TEXT,
    lot          TEXT,
    expiry       TEXT,
    serial       TEXT,
    location     TEXT,
    actor        TEXT NOT NULL,
    at           TEXT NOT NULL
);
CREATE INDEX receptions_by_inbound ON receptions (inbound_id, id);

-- Waves group confirmed orders of one warehouse; pick lines are the work,
-- in walking order.
CREATE TABLE waves (
    id            INTEGER PRIMARY KEY,
    business_id   INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    status        TEXT NOT NULL,
    carrier       TEXT,
    cutoff        TEXT,
    created_at    TEXT NOT NULL,
    completed_at  TEXT
);
CREATE INDEX waves_by_status ON waves (business_id, status, id);

CREATE TABLE pick_lines (
    id           INTEGER PRIMARY KEY,
    wave_id      INTEGER NOT NULL REFERENCES waves (id),
    order_id     INTEGER NOT NULL REFERENCES orders (id),
    item_id      INTEGER NOT NULL REFERENCES items (id),
    sku          TEXT NOT NULL,
    location     TEXT,
    lot          TEXT,
    expiry       TEXT,
    quantity     INTEGER NOT NULL,
    picked       INTEGER NOT NULL DEFAULT 0,
    seq          INTEGER NOT NULL
);
CREATE INDEX pick_lines_by_wave ON pick_lines (wave_id, seq);
CREATE INDEX pick_lines_by_order ON pick_lines (order_id);

-- Shipments: one per packed order, with packages and tracking milestones.
CREATE TABLE dispatch_runs (
    id            INTEGER PRIMARY KEY,
    business_id   INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    carrier       TEXT NOT NULL,
    status        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    closed_at     TEXT,
    manifest      BLOB
);
CREATE INDEX dispatch_runs_open ON dispatch_runs (business_id, warehouse_id, carrier, status);

CREATE TABLE shipments (
    id                  INTEGER PRIMARY KEY,
    business_id         INTEGER NOT NULL REFERENCES businesses (id),
    order_id            INTEGER NOT NULL UNIQUE REFERENCES orders (id),
    warehouse_id        INTEGER NOT NULL REFERENCES warehouses (id),
    carrier             TEXT NOT NULL,
    service             TEXT NOT NULL,
    tracking_number     TEXT UNIQUE,
    status              TEXT NOT NULL,
    dispatch_run_id     INTEGER REFERENCES dispatch_runs (id),
    estimated_delivery  TEXT,
    packed_at           TEXT NOT NULL,
    dispatched_at       TEXT,
    delivered_at        TEXT
);
CREATE INDEX shipments_by_status ON shipments (business_id, status, id);
CREATE INDEX shipments_by_carrier ON shipments (business_id, carrier, id);
CREATE INDEX shipments_by_dispatch ON shipments (business_id, dispatched_at, id);
CREATE INDEX shipments_by_run ON shipments (dispatch_run_id);

CREATE TABLE packages (
    shipment_id  INTEGER NOT NULL REFERENCES shipments (id),
    idx          INTEGER NOT NULL,
    weight_g     INTEGER NOT NULL,
    length_mm    INTEGER,
    width_mm     INTEGER,
    height_mm    INTEGER,
    PRIMARY KEY (shipment_id, idx)
) WITHOUT ROWID;

CREATE TABLE tracking_events (
    id           INTEGER PRIMARY KEY,
    shipment_id  INTEGER NOT NULL REFERENCES shipments (id),
    milestone    TEXT NOT NULL,
    description  TEXT NOT NULL,
    city         TEXT,
    at           TEXT NOT NULL,
    source       TEXT NOT NULL,
    dedup_key    TEXT NOT NULL,
    UNIQUE (shipment_id, dedup_key)
);
CREATE INDEX tracking_events_by_shipment ON tracking_events (shipment_id, at, id);

CREATE TABLE printers (
    id           INTEGER PRIMARY KEY,
    business_id  INTEGER NOT NULL REFERENCES businesses (id),
    name         TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('zpl', 'pdf')),
    connection   TEXT NOT NULL,
    station      TEXT,
    status       TEXT NOT NULL DEFAULT 'unknown',
    last_seen    TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (business_id, name)
);

CREATE TABLE print_jobs (
    id            INTEGER PRIMARY KEY,
    business_id   INTEGER NOT NULL,
    printer_id    INTEGER NOT NULL REFERENCES printers (id),
    format        TEXT NOT NULL CHECK (format IN ('zpl', 'pdf')),
    data          BLOB NOT NULL,
    size          INTEGER NOT NULL,
    status        TEXT NOT NULL,
    error         TEXT,
    actor         TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX print_jobs_by_printer ON print_jobs (printer_id, id);

CREATE TABLE documents (
    id            INTEGER PRIMARY KEY,
    business_id   INTEGER NOT NULL REFERENCES businesses (id),
    entity_type   TEXT NOT NULL,
    entity_id     INTEGER NOT NULL,
    category      TEXT NOT NULL,
    filename      TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    size          INTEGER NOT NULL,
    sha256        TEXT NOT NULL,
    description   TEXT,
    actor         TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
CREATE INDEX documents_by_entity ON documents (business_id, entity_type, entity_id, id);

INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'inbound_orders', COUNT(*) FROM inbound_orders GROUP BY business_id;
CREATE TRIGGER inbound_orders_counted AFTER INSERT ON inbound_orders BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'inbound_orders', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'inbound_orders';
END;
CREATE TRIGGER waves_counted AFTER INSERT ON waves BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'waves', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'waves';
END;
CREATE TRIGGER shipments_counted AFTER INSERT ON shipments BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'shipments', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'shipments';
END;
CREATE TRIGGER dispatch_runs_counted AFTER INSERT ON dispatch_runs BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'dispatch_runs', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'dispatch_runs';
END;
