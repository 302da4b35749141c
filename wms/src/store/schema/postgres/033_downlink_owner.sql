-- Which cloud instance pages the cloud's log down to an edge: the one
-- that answered its last hello (its sync session). With several
-- instances sharing the edges' messages, a hello may reach any of them;
-- one that no longer owns an edge stops paging it, so the edge is fed by
-- one instance, not by every instance it ever said hello to.
ALTER TABLE edges ADD COLUMN downlink_owner TEXT;
