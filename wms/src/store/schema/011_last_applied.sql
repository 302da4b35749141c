-- Edge side: the last change of the cloud's log applied here, by rev and
-- id, so a hello can tell a cloud restored from an older backup (whose log
-- holds other changes at those revs) from the one it synced with.
ALTER TABLE sync_state ADD COLUMN last_rev INTEGER;
ALTER TABLE sync_state ADD COLUMN last_id TEXT;
