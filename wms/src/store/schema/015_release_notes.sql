-- Release notes: releases of each product (wms, app, signage), each with a
-- release date and notes (title and Markdown body) per locale, one locale
-- being the release's default. Releases published before this had one
-- product and one language: they become `wms` releases in `en`, dated the
-- day they were published. The table is rebuilt because a version is now
-- unique per product rather than overall.
ALTER TABLE releases RENAME TO releases_008;

CREATE TABLE releases (
    id              INTEGER PRIMARY KEY,
    product         TEXT NOT NULL CHECK (product IN ('wms', 'app', 'signage')),
    version         TEXT NOT NULL,
    date            TEXT NOT NULL,
    default_locale  TEXT NOT NULL,
    published_by    TEXT,
    published_at    TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (product, version)
);
-- The list, newest first, with or without a product filter.
CREATE INDEX releases_by_date ON releases (date, published_at, id);
CREATE INDEX releases_by_product ON releases (product, date, published_at, id);

CREATE TABLE release_notes (
    release_id  INTEGER NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    locale      TEXT NOT NULL,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL,
    PRIMARY KEY (release_id, locale)
) WITHOUT ROWID;

INSERT INTO releases (id, product, version, date, default_locale, published_at, updated_at)
SELECT id, 'wms', version, substr(published_at, 1, 10), 'en', published_at, published_at
FROM releases_008;

INSERT INTO release_notes (release_id, locale, title, body)
SELECT id, 'en', title, notes FROM releases_008;

DROP TABLE releases_008;

-- Translation sync jobs (cloud only). `updated_at` moves with every step:
-- a running job that stopped moving was cut short by its process.
CREATE TABLE translation_jobs (
    id            INTEGER PRIMARY KEY,
    status        TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    total         INTEGER NOT NULL DEFAULT 0,
    done          INTEGER NOT NULL DEFAULT 0,
    filled        INTEGER NOT NULL DEFAULT 0,
    skipped       INTEGER NOT NULL DEFAULT 0,
    failed        INTEGER NOT NULL DEFAULT 0,
    errors        TEXT NOT NULL DEFAULT '[]',
    message       TEXT,
    requested_by  TEXT,
    started_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    finished_at   TEXT
);
-- One running job at a time, whichever instance started it.
CREATE UNIQUE INDEX translation_jobs_one_running ON translation_jobs (status)
WHERE status = 'running';
