-- An event refused where it arrived (a reference outside the sender's
-- business, a transition the state machine refuses, an apply that failed)
-- stays in the log: a resend is known by its id, and an edge can take its
-- own events back in their places. Nothing reads it as having happened:
-- pages to other edges, streams, lists and webhooks skip it.
ALTER TABLE events ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;

-- Cloud side: the warehouses an edge serves, which its events may write
-- into. An edge with none listed serves every warehouse of its business.
CREATE TABLE edge_warehouses (
    business_id   INTEGER NOT NULL,
    edge_id       TEXT NOT NULL,
    warehouse_id  INTEGER NOT NULL REFERENCES warehouses (id),
    PRIMARY KEY (business_id, edge_id, warehouse_id),
    FOREIGN KEY (business_id, edge_id) REFERENCES edges (business_id, edge_id)
) WITHOUT ROWID;

-- Cloud side: how many of an edge's events were refused here, and the
-- last one: its kind, why, and when. The edge list shows them.
ALTER TABLE edges ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE edges ADD COLUMN last_refused_kind TEXT;
ALTER TABLE edges ADD COLUMN last_refused_reason TEXT;
ALTER TABLE edges ADD COLUMN last_refused_at TEXT;

-- Edge side: the same, in both directions: the cloud's changes this box
-- refused, and this box's events the cloud refused.
ALTER TABLE sync_state ADD COLUMN refused_down INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_state ADD COLUMN refused_up INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_state ADD COLUMN last_refused_kind TEXT;
ALTER TABLE sync_state ADD COLUMN last_refused_reason TEXT;
ALTER TABLE sync_state ADD COLUMN last_refused_at TEXT;
ALTER TABLE sync_state ADD COLUMN last_refused_direction TEXT;

-- Cloud side: whether an online edge's retained state says so (its last
-- will then says when it goes), or only a hello (which no will follows:
-- shown online only while it keeps being heard from).
ALTER TABLE edges ADD COLUMN online_by_state INTEGER NOT NULL DEFAULT 1;
