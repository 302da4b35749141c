-- Tickets for the live feed's websocket (browsers cannot send the key as
-- a header): single-use, short-lived, kept here rather than in one
-- process's memory, so a ticket issued by one cloud instance opens a
-- stream on another. Only each ticket's SHA-256 is kept.
CREATE TABLE live_tickets (
    hash         TEXT PRIMARY KEY,
    business_id  INTEGER NOT NULL,
    key_id       INTEGER NOT NULL,
    -- Milliseconds since the Unix epoch.
    expires_at   INTEGER NOT NULL
);
CREATE INDEX live_tickets_by_expiry ON live_tickets (expires_at);
