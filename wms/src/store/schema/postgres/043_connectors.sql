-- Connectors (see SQLite's 043).
CREATE TABLE connectors (
    channel_id        BIGINT PRIMARY KEY REFERENCES channels (id),
    business_id       BIGINT NOT NULL REFERENCES businesses (id),
    settings          TEXT NOT NULL,
    orders_cursor     TEXT NOT NULL DEFAULT '',
    availability_cursor BIGINT NOT NULL DEFAULT 0,
    fulfilment_cursor BIGINT NOT NULL DEFAULT 0,
    state             TEXT NOT NULL,
    failures          BIGINT NOT NULL DEFAULT 0,
    last_error        TEXT,
    last_ok_at        TEXT,
    next_attempt_at   TEXT NOT NULL,
    lease_owner       TEXT,
    lease_until       TEXT,
    orders_in         BIGINT NOT NULL DEFAULT 0,
    orders_refused    BIGINT NOT NULL DEFAULT 0,
    last_refusal      TEXT,
    figures_out       BIGINT NOT NULL DEFAULT 0,
    fulfilments_out   BIGINT NOT NULL DEFAULT 0,
    updated_at        TEXT NOT NULL
);
CREATE INDEX connectors_due ON connectors (next_attempt_at);
