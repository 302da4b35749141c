-- Outbound webhooks (cloud only; an edge's database carries the empty
-- tables). Times the dispatcher schedules by are Unix milliseconds; those
-- the API shows are text, as everywhere else.

-- Subscriptions. `after_seq` is the head of the event log when the
-- subscription was made: it receives only what came after.
CREATE TABLE webhooks (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    business_id  INTEGER NOT NULL REFERENCES businesses (id),
    url          TEXT NOT NULL,
    event_types  TEXT NOT NULL,  -- JSON array of types, families (order.*) or *
    secret       TEXT NOT NULL,
    description  TEXT,
    active       INTEGER NOT NULL CHECK (active IN (0, 1)),
    after_seq    INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX webhooks_by_business ON webhooks (business_id, id);

-- How far the log has been turned into deliveries: moved in the same
-- transaction as the deliveries it made, so a restart neither loses nor
-- repeats one. History before this table existed is not delivered.
CREATE TABLE webhook_cursor (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL
);
INSERT INTO webhook_cursor (id, seq) SELECT 1, COALESCE(MAX(seq), 0) FROM events;

-- One event on its way to one subscription. A subscription's pending
-- deliveries go out in log order, one at a time. `leased_until_ms`: an
-- attempt is in flight (by this or another instance) until then; a
-- lease left by a process that stopped simply runs out. The retry
-- period runs from `retry_from_ms` (creation, or a manual retry).
CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,  -- UUIDv7: Depot-Webhook-Id
    webhook_id       INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_seq        INTEGER NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_at_ms       INTEGER,
    leased_until_ms  INTEGER,
    retry_from_ms    INTEGER NOT NULL,
    last_status      INTEGER,
    last_error       TEXT,
    created_at       TEXT NOT NULL,
    finished_at      TEXT,
    UNIQUE (webhook_id, event_seq)
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, event_seq)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries (webhook_id, status, event_seq);

-- Every attempt of a delivery, numbered from 1.
CREATE TABLE webhook_attempts (
    delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    number       INTEGER NOT NULL,
    at           TEXT NOT NULL,
    duration_ms  INTEGER NOT NULL,
    status_code  INTEGER,
    error        TEXT,
    response     TEXT,
    PRIMARY KEY (delivery_id, number)
) WITHOUT ROWID;
