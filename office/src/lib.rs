//! The office side of the cloud: CRM (departments, contact forms, threads),
//! pricing rules and their jobs, the OAuth server's storage and outgoing
//! webhooks. Built on the warehouse engine, in the same database and the
//! same transactions, and compiled by the cloud only: an edge never runs
//! any of it.
//!
//! `Office` is the engine's handle seen from here; `store` holds the
//! office's SQL; `http` its part of `/v1` (the cloud mounts it beside the
//! warehouse's routes).

pub mod crm;
pub mod http;
pub mod oauth;
pub mod pricing;
mod store;
pub mod webhooks;

use depot_wms::Wms;

/// The engine, for the office's operations: cheap to clone, and taken by
/// the office's routes straight from the warehouse routes' state.
#[derive(Clone)]
pub struct Office(Wms);

impl Office {
    pub fn new(wms: Wms) -> Self {
        Self(wms)
    }
}

impl std::ops::Deref for Office {
    type Target = Wms;

    fn deref(&self) -> &Wms {
        &self.0
    }
}

impl axum::extract::FromRef<Wms> for Office {
    fn from_ref(wms: &Wms) -> Self {
        Self(wms.clone())
    }
}
