//! Documents attached to orders, shipments and inbound orders.

use crate::BusinessId;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Largest upload accepted.
pub const MAX_DOCUMENT_BYTES: usize = 10 * 1024 * 1024;

/// Content types a document may have.
pub const ALLOWED_TYPES: [&str; 5] = [
    "application/pdf",
    "image/png",
    "image/jpeg",
    "application/xml",
    "text/xml",
];

/// What documents attach to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntityType {
    Order,
    Shipment,
    Purchase,
}

impl EntityType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Order => "order",
            Self::Shipment => "shipment",
            Self::Purchase => "purchase",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Order, Self::Shipment, Self::Purchase]
            .into_iter()
            .find(|e| e.as_str() == s)
    }
}

/// A document category and the tax treatment it carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Category {
    pub code: String,
    pub name: String,
    /// Tax types a document of this category may declare.
    pub tax_types: Vec<String>,
    /// What it may be attached to.
    pub entity_types: Vec<EntityType>,
}

/// The categories every business has.
pub fn categories() -> Vec<Category> {
    let c = |code: &str, name: &str, tax: &[&str], entities: &[EntityType]| Category {
        code: code.into(),
        name: name.into(),
        tax_types: tax.iter().map(|t| (*t).to_owned()).collect(),
        entity_types: entities.to_vec(),
    };
    use EntityType::*;
    vec![
        c(
            "invoice",
            "Invoice",
            &[
                "vat_standard",
                "vat_reduced",
                "vat_exempt",
                "reverse_charge",
            ],
            &[Order, Purchase],
        ),
        c(
            "credit_note",
            "Credit note",
            &[
                "vat_standard",
                "vat_reduced",
                "vat_exempt",
                "reverse_charge",
            ],
            &[Order, Purchase],
        ),
        c(
            "delivery_note",
            "Delivery note",
            &["none"],
            &[Order, Shipment, Purchase],
        ),
        c(
            "proof_of_delivery",
            "Proof of delivery",
            &["none"],
            &[Shipment],
        ),
        c(
            "customs_declaration",
            "Customs declaration",
            &["import_vat", "duty", "none"],
            &[Shipment, Purchase],
        ),
        c(
            "packing_list",
            "Packing list",
            &["none"],
            &[Shipment, Purchase],
        ),
    ]
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Document {
    pub id: i64,
    pub business_id: BusinessId,
    pub entity_type: EntityType,
    pub entity_id: i64,
    pub category: String,
    pub filename: String,
    pub content_type: String,
    pub size: i64,
    /// Hex SHA-256 of the bytes, as stored.
    pub sha256: String,
    pub description: Option<String>,
    pub uploaded_by: String,
    pub created_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_are_unique_and_attachable() {
        let cats = categories();
        let mut codes: Vec<_> = cats.iter().map(|c| c.code.clone()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), cats.len());
        assert!(
            cats.iter()
                .all(|c| !c.entity_types.is_empty() && !c.tax_types.is_empty())
        );
        for e in [
            EntityType::Order,
            EntityType::Shipment,
            EntityType::Purchase,
        ] {
            assert_eq!(EntityType::parse(e.as_str()), Some(e));
        }
    }
}
