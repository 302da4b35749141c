-- The bytes of documents (see SQLite's 032): kept here on PostgreSQL, so
-- every instance of a cloud reads what any of them received.
CREATE TABLE document_blobs (
    sha256  TEXT PRIMARY KEY,
    bytes   BYTEA NOT NULL
);
