//! The integration tests of `depot-edge`, linked as one binary (one link
//! of the tree instead of one per file). Each module is one area; the
//! helpers every area shares come first.

mod common;

mod backup;
mod broker_tls;
mod cloud_silent;
mod configuration_reference;
mod conflicts;
mod crash;
mod device_events;
mod devices;
mod devices_stations;
mod disk_full;
mod doctor;
mod examples;
mod faults;
mod idempotency;
mod idle_connections;
mod local_keys;
mod long_outage;
mod metrics;
mod notify;
mod offline;
mod old_cloud;
mod outage;
mod reset;
mod routes;
mod station_page;
