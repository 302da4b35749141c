//! Device drivers for the warehouse floor, and their simulators.
//!
//! Each driver is split the way rumqtt splits MQTT: a codec or state machine
//! that only turns bytes and time into events and bytes to send (unit tested
//! with the byte sequences from the vendors' manuals), and a thin tokio task
//! that owns the port or socket. Nothing here knows about HTTP or SQL: the
//! edge stores print jobs and binds devices to stations.

pub mod printer;
pub mod scale;
pub mod scanner;
