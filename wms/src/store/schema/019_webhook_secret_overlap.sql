-- A rotated secret keeps signing beside the new one for a while, so a
-- receiver can switch without refusing deliveries in between.
ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at TEXT;
