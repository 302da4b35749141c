//! Who this box is: its business, its edge id and node number, and the
//! version it runs. Made once at start-up and handed to the routes that
//! check a caller against it or report it.

use serde::Serialize;

/// Who this box is.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Identity {
    pub business_id: i64,
    pub edge_id: String,
    pub node: u32,
    pub version: String,
}
