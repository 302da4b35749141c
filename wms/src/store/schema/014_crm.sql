-- CRM, cloud only: buyers (from orders and contact forms), departments,
-- contact forms and their submissions, threads and messages.

-- One row per person and business. Identity is the email, else the phone,
-- else the name (the *_key columns, normalized by depot_protocol::crm).
CREATE TABLE buyers (
    id            INTEGER PRIMARY KEY,
    business_id   INTEGER NOT NULL REFERENCES businesses (id),
    name          TEXT,
    email         TEXT,
    phone         TEXT,
    name_key      TEXT,
    email_key     TEXT,
    phone_key     TEXT,
    order_count   INTEGER NOT NULL DEFAULT 0,
    thread_count  INTEGER NOT NULL DEFAULT 0,
    first_seen    TEXT NOT NULL,
    last_seen     TEXT NOT NULL
);
CREATE UNIQUE INDEX buyers_by_email ON buyers (business_id, email_key) WHERE email_key IS NOT NULL;
CREATE INDEX buyers_by_phone ON buyers (business_id, phone_key) WHERE phone_key IS NOT NULL;
CREATE INDEX buyers_by_name ON buyers (business_id, name_key) WHERE email_key IS NULL AND phone_key IS NULL;

-- What searches scan: a buyer's name from each of its words on (kind n),
-- email and phone (c), and all three reversed (r), for patterns anchored
-- at their end. Every search is a range of this key.
CREATE TABLE buyer_terms (
    business_id  INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    term         TEXT NOT NULL,
    buyer_id     INTEGER NOT NULL REFERENCES buyers (id),
    PRIMARY KEY (business_id, kind, term, buyer_id)
) WITHOUT ROWID;
CREATE INDEX buyer_terms_by_buyer ON buyer_terms (buyer_id);

CREATE TABLE buyer_channels (
    buyer_id  INTEGER NOT NULL REFERENCES buyers (id),
    channel   TEXT NOT NULL,
    PRIMARY KEY (buyer_id, channel)
) WITHOUT ROWID;

CREATE TABLE crm_departments (
    id           INTEGER PRIMARY KEY,
    business_id  INTEGER NOT NULL REFERENCES businesses (id),
    code         TEXT NOT NULL,
    name         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    UNIQUE (business_id, code)
);

CREATE TABLE contact_forms (
    id                      INTEGER PRIMARY KEY,
    business_id             INTEGER NOT NULL REFERENCES businesses (id),
    department_id           INTEGER NOT NULL REFERENCES crm_departments (id),
    name                    TEXT NOT NULL,
    fields                  TEXT NOT NULL,
    max_per_email_per_hour  INTEGER NOT NULL,
    max_per_hour            INTEGER NOT NULL,
    max_links               INTEGER NOT NULL,
    created_at              TEXT NOT NULL
);
CREATE INDEX contact_forms_by_business ON contact_forms (business_id, id);

-- Accepted submissions, for the hourly limits (per form, per form and email).
CREATE TABLE contact_submissions (
    id         INTEGER PRIMARY KEY,
    form_id    INTEGER NOT NULL REFERENCES contact_forms (id),
    email      TEXT NOT NULL,
    thread_id  INTEGER NOT NULL,
    at         TEXT NOT NULL
);
CREATE INDEX contact_submissions_by_form ON contact_submissions (form_id, at);
CREATE INDEX contact_submissions_by_email ON contact_submissions (form_id, email, at);

CREATE TABLE crm_threads (
    id               INTEGER PRIMARY KEY,
    business_id      INTEGER NOT NULL REFERENCES businesses (id),
    subject          TEXT NOT NULL,
    status           TEXT NOT NULL,
    department_id    INTEGER REFERENCES crm_departments (id),
    integration_id   TEXT NOT NULL,
    form_id          INTEGER REFERENCES contact_forms (id),
    buyer_id         INTEGER REFERENCES buyers (id),
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    message_count    INTEGER NOT NULL DEFAULT 0,
    last_message_at  TEXT NOT NULL
);
CREATE INDEX crm_threads_by_activity ON crm_threads (business_id, last_message_at, id);
CREATE INDEX crm_threads_by_integration ON crm_threads (business_id, integration_id, last_message_at, id);
CREATE INDEX crm_threads_by_department ON crm_threads (business_id, department_id, last_message_at, id);

CREATE TABLE crm_messages (
    id          INTEGER PRIMARY KEY,
    thread_id   INTEGER NOT NULL REFERENCES crm_threads (id),
    direction   TEXT NOT NULL,
    author      TEXT NOT NULL,
    body        TEXT NOT NULL,
    fields      TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX crm_messages_by_thread ON crm_messages (thread_id, id);

CREATE TRIGGER buyers_counted AFTER INSERT ON buyers BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'buyers', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'buyers';
END;
CREATE TRIGGER crm_departments_counted AFTER INSERT ON crm_departments BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'crm_departments', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'crm_departments';
END;
CREATE TRIGGER contact_forms_counted AFTER INSERT ON contact_forms BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'contact_forms', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'contact_forms';
END;
CREATE TRIGGER crm_threads_counted AFTER INSERT ON crm_threads BEGIN
    INSERT OR IGNORE INTO row_counts (business_id, tbl, n) VALUES (NEW.business_id, 'crm_threads', 0);
    UPDATE row_counts SET n = n + 1 WHERE business_id = NEW.business_id AND tbl = 'crm_threads';
END;
