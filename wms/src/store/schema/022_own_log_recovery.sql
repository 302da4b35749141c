-- Cloud side: where each edge event stood in its edge's log. An edge whose
-- log lost its tail (restored from an older backup, or replaced by a new
-- box) takes those events back from here, by that position.
ALTER TABLE events ADD COLUMN remote_seq INTEGER;
CREATE UNIQUE INDEX events_by_remote_seq ON events (origin, remote_seq)
    WHERE remote_seq IS NOT NULL;

-- Edge side: whether this node's own log is known whole. `recover_from` is
-- the seq the log is certain through when it may not be (a restore, or a
-- database started empty): until the cloud has answered, nothing of the
-- node's own goes up, since the cloud may hold later events of it.
-- `recovered` is how far its events came back; `shifted` whether events
-- made meanwhile were renumbered past the cloud's.
ALTER TABLE sync_state ADD COLUMN recover_from INTEGER;
ALTER TABLE sync_state ADD COLUMN recovered INTEGER;
ALTER TABLE sync_state ADD COLUMN shifted INTEGER NOT NULL DEFAULT 0;
-- A database that never logged an event of its own may be a new box that
-- takes over from one that did: the first answer from the cloud says.
UPDATE sync_state SET recover_from = 0, recovered = 0
    WHERE NOT EXISTS (SELECT 1 FROM events WHERE out_seq IS NOT NULL);
