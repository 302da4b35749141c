-- Edge side: what stands in the way of sync, in words naming what to look
-- at: while the link is down, the last failure to connect or to stay
-- connected; while it is up, a subscription the broker refused or a cloud
-- that does not answer. The status route, the CLI and the doctor say it.
ALTER TABLE sync_state ADD COLUMN link_error TEXT;
