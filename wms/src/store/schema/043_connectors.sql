-- A channel's connector to the platform it sells on: its settings (JSON,
-- secrets included: the cloud's database is the cloud's), its three
-- cursors (the platform's orders, the channel's change feed, the event
-- log's dispatches), how it is doing, and the lease of the instance
-- running it, so that two cloud instances never run one connector at
-- once.
CREATE TABLE connectors (
    channel_id        INTEGER PRIMARY KEY REFERENCES channels (id),
    business_id       INTEGER NOT NULL REFERENCES businesses (id),
    settings          TEXT NOT NULL,
    orders_cursor     TEXT NOT NULL DEFAULT '',
    availability_cursor INTEGER NOT NULL DEFAULT 0,
    fulfilment_cursor INTEGER NOT NULL DEFAULT 0,
    state             TEXT NOT NULL,
    failures          INTEGER NOT NULL DEFAULT 0,
    last_error        TEXT,
    last_ok_at        TEXT,
    next_attempt_at   TEXT NOT NULL,
    lease_owner       TEXT,
    lease_until       TEXT,
    orders_in         INTEGER NOT NULL DEFAULT 0,
    orders_refused    INTEGER NOT NULL DEFAULT 0,
    last_refusal      TEXT,
    figures_out       INTEGER NOT NULL DEFAULT 0,
    fulfilments_out   INTEGER NOT NULL DEFAULT 0,
    updated_at        TEXT NOT NULL
);
CREATE INDEX connectors_due ON connectors (next_attempt_at);
