//! The integration tests of `depot-cloud`, linked as one binary (one link
//! of the tree instead of one per file). Each module is one area; the
//! helpers every area shares come first.

mod process;

mod auth;
mod broker;
mod changelog;
mod channels;
mod concurrency;
mod configuration_reference;
mod connectors;
mod counts;
mod crash;
mod crm;
mod disk_full;
mod examples;
mod flow;
mod health;
mod idempotency;
mod inventory;
mod live;
mod locations;
mod metrics;
mod notify;
mod oauth;
mod on_postgres;
mod openapi;
mod orders;
mod packing_world;
mod portable_sql;
mod pricing;
mod printing_documents;
mod putaway;
mod quiet_log;
mod ratelimit;
mod replenishment;
mod returns;
mod slow_callers;
mod sync_service;
mod two_clouds;
mod validation;
mod webhooks;
