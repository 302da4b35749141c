-- The OAuth 2.0 authorization server of the release-notes API (cloud
-- only; an edge's database carries the empty tables). Times are Unix
-- seconds: every row here is compared with a token's `exp`/`iat`.

-- Signing keys. A key signs from `created_at` until `retire_at`, and stays
-- published in the JWKS until `expire_at`, after the last token it signed
-- has expired.
CREATE TABLE oauth_keys (
    kid         TEXT PRIMARY KEY,
    pkcs8       BLOB NOT NULL,
    created_at  INTEGER NOT NULL,
    retire_at   INTEGER NOT NULL,
    expire_at   INTEGER NOT NULL
);

-- Clients registered by an operator or through RFC 7591. An unclaimed
-- client (`owner` NULL) may hold no scope until a person claims it.
CREATE TABLE oauth_clients (
    client_id      TEXT PRIMARY KEY,
    secret_hash    TEXT,
    metadata       TEXT NOT NULL,
    allowed_scope  TEXT NOT NULL DEFAULT '',
    owner          TEXT,
    claim_hash     TEXT UNIQUE,
    created_at     INTEGER NOT NULL
);

-- People who sign in on the login page.
CREATE TABLE oauth_users (
    username       TEXT PRIMARY KEY,
    password_hash  TEXT NOT NULL,
    scope          TEXT NOT NULL,
    created_at     INTEGER NOT NULL
);

-- Authorization codes, single use: taken (deleted) by the token request.
CREATE TABLE oauth_codes (
    code_hash       TEXT PRIMARY KEY,
    client_id       TEXT NOT NULL,
    redirect_uri    TEXT NOT NULL,
    code_challenge  TEXT NOT NULL,
    scope           TEXT NOT NULL,
    subject         TEXT NOT NULL,
    expires_at      INTEGER NOT NULL
);

-- Identity assertions already exchanged: a replayed `jti` is refused
-- until the assertion itself has expired.
CREATE TABLE oauth_assertions (
    issuer      TEXT NOT NULL,
    jti         TEXT NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (issuer, jti)
) WITHOUT ROWID;
