-- Edge side: why taking the node's own events back cannot go on (the cloud
-- does not hand them back: a cloud older than the edge), while it cannot.
ALTER TABLE sync_state ADD COLUMN recover_stalled TEXT;
