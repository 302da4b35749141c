-- Pricing rules (automation), made and run in the cloud only. A business's
-- rules hold the positions 1..n: moves rewrite them, never leaving a gap
-- or a tie. AUTOINCREMENT so that the id of a deleted rule, which the
-- audit still names, is never given to another.
CREATE TABLE pricing_rules (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    business_id           INTEGER NOT NULL REFERENCES businesses (id),
    position              INTEGER NOT NULL,
    name                  TEXT,
    origin_price_list_id  INTEGER NOT NULL,
    target_price_list_id  INTEGER NOT NULL,
    action_id             TEXT NOT NULL,
    action_value          TEXT NOT NULL,
    condition_id          TEXT NOT NULL,
    condition_value       TEXT NOT NULL,
    conditions            TEXT NOT NULL,  -- JSON object: condition id → value
    channels              TEXT NOT NULL,  -- JSON array of channel codes
    status                INTEGER NOT NULL CHECK (status IN (0, 1)),
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    UNIQUE (business_id, position)
);

-- Every job run, by its key: a job run again answers `result` (the JSON
-- answered the first time) if `request` is the same, and changes nothing.
CREATE TABLE pricing_jobs (
    business_id  INTEGER NOT NULL REFERENCES businesses (id),
    job_id       TEXT NOT NULL,
    request      TEXT NOT NULL,
    result       TEXT NOT NULL,
    executed_at  TEXT NOT NULL,
    PRIMARY KEY (business_id, job_id)
) WITHOUT ROWID;

-- The audit: every price a job changed, with what it was before (NULL: the
-- item had no price in that list).
CREATE TABLE pricing_changes (
    id                INTEGER PRIMARY KEY,
    business_id       INTEGER NOT NULL,
    job_id            TEXT NOT NULL,
    rule_id           INTEGER NOT NULL,
    item_id           INTEGER NOT NULL REFERENCES items (id),
    price_list_id     INTEGER NOT NULL,
    old_amount_cents  INTEGER,
    new_amount_cents  INTEGER NOT NULL,
    currency          TEXT NOT NULL,
    at                TEXT NOT NULL
);
CREATE INDEX pricing_changes_by_job ON pricing_changes (business_id, job_id, id);
