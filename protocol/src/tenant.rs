//! Tenants: businesses, their warehouses, and API keys.

use crate::order::Address;
use crate::{BusinessId, KeyId, WarehouseId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A business (tenant) and its configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Business {
    pub id: BusinessId,
    pub name: String,
    /// Default currency of prices and orders (ISO 4217).
    pub currency: String,
    /// IANA time zone the business reports in.
    pub timezone: String,
    /// The GS1 company prefix its parcels' SSCCs are numbered from (4 to
    /// 12 digits); none: parcels get no SSCC.
    #[serde(default)]
    pub gs1_company_prefix: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A warehouse of a business.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Warehouse {
    pub id: WarehouseId,
    pub business_id: BusinessId,
    /// Short code printed on labels and used by stations ("MAD1").
    pub code: String,
    pub name: String,
    pub address: Address,
    /// 1 when buyers may pick up orders here (shown to sales channels), else 0.
    pub is_visible_sales: i32,
    pub created_at: DateTime<Utc>,
}

/// An API key as listed: never the secret, which is shown once at creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ApiKey {
    pub id: KeyId,
    pub business_id: BusinessId,
    /// The first characters of the key, to tell keys apart.
    pub prefix: String,
    pub label: Option<String>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Who is calling: resolved from the `X-API-KEY` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    pub key_id: KeyId,
    pub business_id: BusinessId,
}

impl Caller {
    /// The identity written into audit trails (movements, status history).
    pub fn actor(&self) -> String {
        format!("key:{}", self.key_id)
    }
}
