//! The office's SQL, one module per part. Its tables are in the engine's
//! schema (one database has one version: `depot_wms` migrates it), and its
//! writes run in the engine's transactions, logged through
//! `depot_wms::sql::append_event` as the engine's are.

pub mod crm;
pub mod oauth;
pub mod pricing;
pub mod webhooks;
