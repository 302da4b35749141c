-- Sales channels: which warehouses' stock each may sell, and how much of
-- it. What each may sell of each item is kept in the transaction of every
-- change that moves it, each change numbered in its business's feed
-- (`channel_feed.seq`: taken by updating the business's row, so numbers
-- are given in commit order and a reader past one has every one before
-- it); `emitted` is how far the debounced events have been written.
CREATE TABLE channels (
    id              INTEGER PRIMARY KEY,
    business_id     INTEGER NOT NULL REFERENCES businesses (id),
    code            TEXT NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL,
    buffer_units    INTEGER NOT NULL,
    buffer_percent  INTEGER,
    cap_units       INTEGER,
    cap_percent     INTEGER,
    oversell        INTEGER NOT NULL,
    backorders      TEXT NOT NULL CHECK (backorders IN ('wait', 'split')),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (business_id, code)
);

CREATE TABLE channel_warehouses (
    channel_id    INTEGER NOT NULL REFERENCES channels (id),
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    PRIMARY KEY (channel_id, warehouse_id)
);
CREATE INDEX channel_warehouses_by_warehouse ON channel_warehouses (warehouse_id, channel_id);

-- Keyed by item first: the figures of one item's channels, which a stock
-- write changes together, share a page; and their feed numbers, taken
-- together, sit side by side in the feed's index (by business, so a
-- business's feed reads only its own). A write rewrites a few pages, not
-- one per channel.
CREATE TABLE channel_availability (
    item_id     INTEGER NOT NULL REFERENCES items (id),
    business_id INTEGER NOT NULL REFERENCES businesses (id),
    channel_id  INTEGER NOT NULL REFERENCES channels (id),
    available   INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    PRIMARY KEY (item_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX channel_availability_by_seq ON channel_availability (business_id, seq);
-- A channel's rows, when it is made or edited (written once per row).
CREATE INDEX channel_availability_by_channel ON channel_availability (channel_id, item_id);

CREATE TABLE channel_feed (
    business_id  INTEGER PRIMARY KEY REFERENCES businesses (id),
    seq          INTEGER NOT NULL,
    emitted      INTEGER NOT NULL
);

INSERT INTO row_counts (business_id, tbl, n) SELECT business_id, 'channels', COUNT(*) FROM channels GROUP BY business_id;
CREATE TRIGGER channels_counted AFTER INSERT ON channels BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'channels', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'channels';
END;
