-- Tickets for the live feed's websocket (see SQLite's 034): in the
-- database, so a ticket issued by one instance opens a stream on another.
CREATE TABLE live_tickets (
    hash         TEXT PRIMARY KEY,
    business_id  BIGINT NOT NULL,
    key_id       BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX live_tickets_by_expiry ON live_tickets (expires_at);
