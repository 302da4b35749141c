-- Edge side: why the link to the broker is down (the last failure to
-- connect or to stay connected, in words naming the setting to change), so
-- the status route, the CLI and the doctor can say it; cleared on connect.
ALTER TABLE sync_state ADD COLUMN link_error TEXT;
