-- The bytes of documents, where the database keeps them: on PostgreSQL,
-- so that every instance of a cloud reads what any of them received. On
-- SQLite they stay files beside the database (documents/<sha>) and this
-- table stays empty.
CREATE TABLE document_blobs (
    sha256  TEXT PRIMARY KEY,
    bytes   BLOB NOT NULL
) WITHOUT ROWID;
