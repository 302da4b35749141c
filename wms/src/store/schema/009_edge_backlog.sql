-- Cloud side: what each edge last said about itself. `reported_head` is the
-- newest event of its log it reported (in hello, in its `online` state, and
-- at least what its batches carried), so its backlog is reported_head -
-- up_cursor. `online` follows its retained state topic (`online`, or
-- `offline` from its last will) and its hellos; `state_session` is the run
-- of the edge that state belongs to, so a late will of an earlier run does
-- not take a newer one offline.
ALTER TABLE edges ADD COLUMN reported_head INTEGER;
ALTER TABLE edges ADD COLUMN online INTEGER NOT NULL DEFAULT 0;
ALTER TABLE edges ADD COLUMN state_session TEXT;
ALTER TABLE edges ADD COLUMN state_at TEXT;

-- Edge side: how often the cloud told this box to reload its feed (`reset`:
-- a cloud restored from an older backup), and when it last did.
ALTER TABLE sync_state ADD COLUMN resets INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_state ADD COLUMN last_reset_at TEXT;
