-- Idempotency keys (`Idempotency-Key` on a write): a request sent again
-- with the key of one already applied is answered with the first answer
-- and applies nothing. The row is written in the transaction of the
-- request's own write, so an applied request always has its key; `status`,
-- `content_type`, `location` and `body` are its answer, NULL until it is
-- stored (when a process died between the two, the request was applied and
-- its answer lost). `scope` is the SHA-256 (hex) of the caller's credential,
-- or of the path on a public route; `fingerprint` the SHA-256 (hex) of the
-- method, path, query and body. Rows older than the retention period are
-- ignored, replaced by a new use of their key and pruned (oldest first,
-- through the index on `created_at`).
CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER,
    content_type TEXT,
    location TEXT,
    body BLOB,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
