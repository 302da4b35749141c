//! The integration tests of `depot-wms`, linked as one binary (one link
//! of the tree instead of one per file). Each module is one area; the
//! helpers every area shares come first.

mod backorders;
mod channels_feed;
mod channels_sync;
mod close;
mod counts_sync;
mod group_commit_pg;
mod ledger_props;
mod local_keys;
mod locations_sync;
mod movement_runs;
mod node_ids;
mod orders_ingest;
mod paging;
mod plans_pg;
mod recovery;
mod replication;
mod returns_sync;
mod round_trips_pg;
mod schema_pg;
mod sync_down;
mod sync_receive;
mod sync_reset;
mod two_instances;
