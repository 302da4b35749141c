-- Tenants.
CREATE TABLE businesses (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    currency    TEXT NOT NULL,
    timezone    TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE warehouses (
    id                INTEGER PRIMARY KEY,
    business_id       INTEGER NOT NULL REFERENCES businesses (id),
    code              TEXT NOT NULL,
    name              TEXT NOT NULL,
    address           TEXT NOT NULL,
    is_visible_sales  INTEGER NOT NULL,
    created_at        TEXT NOT NULL,
    UNIQUE (business_id, code)
);

-- Only a SHA-256 of each key is kept; the key is shown once, at creation.
CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY,
    business_id  INTEGER NOT NULL REFERENCES businesses (id),
    hash         BLOB NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    label        TEXT,
    created_at   TEXT NOT NULL,
    revoked_at   TEXT
);

-- Catalog.
CREATE TABLE items (
    id           INTEGER PRIMARY KEY,
    business_id  INTEGER NOT NULL REFERENCES businesses (id),
    sku          TEXT NOT NULL,
    name         TEXT NOT NULL,
    brand        TEXT,
    category     TEXT,
    gtin         TEXT,
    length_mm    INTEGER,
    width_mm     INTEGER,
    height_mm    INTEGER,
    weight_g     INTEGER,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (business_id, sku)
);
CREATE INDEX items_by_category ON items (business_id, category, id);
CREATE INDEX items_by_brand ON items (business_id, brand, id);

-- Every code an item answers to at a scanner, unique per business. `code`
-- is the lookup key (GTINs in their 14-digit form); `display` is as entered.
CREATE TABLE item_codes (
    business_id  INTEGER NOT NULL,
    code         TEXT NOT NULL,
    item_id      INTEGER NOT NULL REFERENCES items (id),
    kind         TEXT NOT NULL CHECK (kind IN ('gtin', 'barcode')),
    position     INTEGER NOT NULL,
    display      TEXT NOT NULL,
    PRIMARY KEY (business_id, code)
) WITHOUT ROWID;
CREATE INDEX item_codes_by_item ON item_codes (item_id, kind, position);

CREATE TABLE item_prices (
    item_id        INTEGER NOT NULL REFERENCES items (id),
    price_list_id  INTEGER NOT NULL,
    amount_cents   INTEGER NOT NULL,
    currency       TEXT NOT NULL,
    PRIMARY KEY (item_id, price_list_id)
) WITHOUT ROWID;

CREATE TABLE item_links (
    item_id   INTEGER NOT NULL REFERENCES items (id),
    position  INTEGER NOT NULL,
    channel   TEXT NOT NULL,
    url       TEXT NOT NULL,
    PRIMARY KEY (item_id, position)
) WITHOUT ROWID;

CREATE TABLE item_locations (
    item_id       INTEGER NOT NULL REFERENCES items (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    location      TEXT NOT NULL,
    PRIMARY KEY (item_id, warehouse_id)
) WITHOUT ROWID;

-- The stock ledger: append-only. `stock_levels` is its running sum, kept in
-- the same transaction as each movement, plus reservations of open orders.
CREATE TABLE stock_movements (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    business_id   INTEGER NOT NULL,
    item_id       INTEGER NOT NULL REFERENCES items (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    location      TEXT,
    delta         INTEGER NOT NULL,
    reason        TEXT NOT NULL,
    ref           TEXT,
    note          TEXT,
    actor         TEXT NOT NULL,
    origin        TEXT NOT NULL,
    at            TEXT NOT NULL
);
CREATE INDEX stock_movements_by_item ON stock_movements (business_id, item_id, warehouse_id, seq);

CREATE TABLE stock_levels (
    item_id       INTEGER NOT NULL REFERENCES items (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    business_id   INTEGER NOT NULL,
    on_hand       INTEGER NOT NULL DEFAULT 0,
    reserved      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (item_id, warehouse_id)
) WITHOUT ROWID;
CREATE INDEX stock_levels_by_business ON stock_levels (business_id, warehouse_id, item_id);

-- Stock that went below zero: recorded, never refused or dropped.
CREATE TABLE stock_discrepancies (
    id            INTEGER PRIMARY KEY,
    business_id   INTEGER NOT NULL,
    item_id       INTEGER NOT NULL,
    warehouse_id  INTEGER NOT NULL,
    movement_id   TEXT NOT NULL,
    on_hand       INTEGER NOT NULL,
    at            TEXT NOT NULL
);
CREATE INDEX stock_discrepancies_by_item ON stock_discrepancies (business_id, item_id, warehouse_id);

-- Orders.
CREATE TABLE orders (
    id                INTEGER PRIMARY KEY,
    business_id       INTEGER NOT NULL REFERENCES businesses (id),
    warehouse_id      INTEGER NOT NULL REFERENCES warehouses (id),
    channel           TEXT NOT NULL,
    external_ref      TEXT NOT NULL,
    status            TEXT NOT NULL,
    buyer_name        TEXT,
    buyer_email       TEXT,
    buyer_phone       TEXT,
    shipping_address  TEXT NOT NULL,
    payments          TEXT NOT NULL,
    currency          TEXT NOT NULL,
    total_cents       INTEGER NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    UNIQUE (business_id, channel, external_ref)
);
CREATE INDEX orders_by_created ON orders (business_id, created_at, id);
CREATE INDEX orders_by_status ON orders (business_id, status, created_at, id);
CREATE INDEX orders_by_channel ON orders (business_id, channel, created_at, id);
CREATE INDEX orders_by_email ON orders (business_id, buyer_email, created_at, id);
CREATE INDEX orders_by_name ON orders (business_id, buyer_name COLLATE NOCASE, created_at, id);

CREATE TABLE order_lines (
    order_id          INTEGER NOT NULL REFERENCES orders (id),
    line_no           INTEGER NOT NULL,
    item_id           INTEGER NOT NULL REFERENCES items (id),
    sku               TEXT NOT NULL,
    name              TEXT NOT NULL,
    quantity          INTEGER NOT NULL,
    unit_price_cents  INTEGER NOT NULL,
    PRIMARY KEY (order_id, line_no)
) WITHOUT ROWID;

CREATE TABLE order_history (
    id           INTEGER PRIMARY KEY,
    order_id     INTEGER NOT NULL REFERENCES orders (id),
    from_status  TEXT,
    to_status    TEXT NOT NULL,
    actor        TEXT NOT NULL,
    note         TEXT,
    at           TEXT NOT NULL
);
CREATE INDEX order_history_by_order ON order_history (order_id, id);

-- The event log: every write appends here in its own transaction; sync
-- replicates it.
CREATE TABLE events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    origin       TEXT NOT NULL,
    business_id  INTEGER,
    kind         TEXT NOT NULL,
    payload      TEXT NOT NULL,
    at           TEXT NOT NULL
);
