//! Requests that create orders and change their status.

use crate::order::{Address, Buyer, OrderStatus, Payment};
use crate::validate::Check;
use crate::{FieldError, Money, WarehouseId};
use chrono::{DateTime, Utc};
use serde::Deserialize;

pub const MAX_LINES: usize = 500;
pub const MAX_PAYMENTS: usize = 20;
pub const MAX_LINE_QUANTITY: i64 = 1_000_000;

/// One line of an ingested order.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct OrderLineCreate {
    #[schema(format = "code", max_length = 64)]
    pub sku: String,
    /// 1 to 1000000.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub quantity: i64,
    /// 0 to 999999999999999.99; defaults to the item's price in its first
    /// price list, else 0. The order's total (the sum of quantity times
    /// unit price) must stay within the same range.
    #[schema(value_type = Option<String>, pattern = r"^[0-9]{1,15}(\.[0-9]{1,2})?$")]
    pub unit_price: Option<Money>,
}

/// Body of `POST /v1/orders/{business_id}/create`. Ingestion is idempotent on
/// (`channel`, `external_ref`): posting the same order again answers the
/// order already stored.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct OrderCreate {
    /// The sales channel ("webshop", "marketplace-eu", ...).
    #[schema(format = "code", max_length = 64)]
    pub channel: String,
    /// The channel's own order reference.
    #[schema(format = "code", max_length = 128)]
    pub external_ref: String,
    /// Fulfilling warehouse; defaults to the business's first warehouse.
    pub warehouse_id: Option<WarehouseId>,
    pub buyer: Option<Buyer>,
    pub shipping_address: Option<Address>,
    pub payments: Option<Vec<Payment>>,
    #[schema(min_items = 1)]
    pub lines: Vec<OrderLineCreate>,
    /// Defaults to the business's currency.
    pub currency: Option<String>,
    /// When the buyer ordered, if the channel says; otherwise now.
    pub ordered_at: Option<DateTime<Utc>>,
    /// Carrier code (default "own", the built-in fleet).
    pub carrier: Option<String>,
    /// Carrier service (default "standard").
    pub service: Option<String>,
}

/// A checked line: the SKU is resolved to an item when stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLine {
    pub sku: String,
    pub quantity: i64,
    pub unit_price: Option<Money>,
}

/// A checked order, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder {
    pub channel: String,
    pub external_ref: String,
    pub warehouse_id: Option<WarehouseId>,
    pub buyer: Buyer,
    pub shipping_address: Address,
    pub payments: Vec<Payment>,
    pub lines: Vec<NewLine>,
    pub currency: Option<String>,
    pub ordered_at: Option<DateTime<Utc>>,
    pub carrier: String,
    pub service: String,
}

impl OrderCreate {
    pub fn parse(self) -> Result<NewOrder, Vec<FieldError>> {
        let mut c = Check::new();
        let channel = c.code("channel", &self.channel, 64);
        let external_ref = c.code("external_ref", &self.external_ref, 128);
        let b = self.buyer.unwrap_or_default();
        let buyer = Buyer {
            name: c.opt_text("buyer.name", b.name.as_deref(), 200),
            email: c
                .opt_text("buyer.email", b.email.as_deref(), 254)
                .map(|e| e.to_lowercase()),
            phone: c.opt_text("buyer.phone", b.phone.as_deref(), 40),
        };
        if buyer.email.as_deref().is_some_and(|e| !e.contains('@')) {
            c.fail("buyer.email", "must be an email address");
        }
        let shipping_address = checked_address(&mut c, self.shipping_address.unwrap_or_default());
        let payments = self.payments.unwrap_or_default();
        c.bounded("payments", &payments, MAX_PAYMENTS);
        let payments = payments
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let method = c.code(&format!("payments[{i}].method"), &p.method, 64);
                if p.amount.cents() < 0 {
                    c.fail(format!("payments[{i}].amount"), "must not be negative");
                }
                let reference = c.opt_text(
                    &format!("payments[{i}].reference"),
                    p.reference.as_deref(),
                    128,
                );
                Payment {
                    method,
                    amount: p.amount,
                    reference,
                    paid_at: p.paid_at,
                }
            })
            .collect();
        if self.lines.is_empty() {
            c.fail("lines", "an order needs at least one line");
        }
        c.bounded("lines", &self.lines, MAX_LINES);
        let lines = self
            .lines
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let sku = c.code(&format!("lines[{i}].sku"), &l.sku, crate::catalog::MAX_SKU);
                let quantity = c.positive(
                    &format!("lines[{i}].quantity"),
                    l.quantity,
                    MAX_LINE_QUANTITY,
                );
                if l.unit_price.is_some_and(|p| p.cents() < 0) {
                    c.fail(format!("lines[{i}].unit_price"), "must not be negative");
                }
                NewLine {
                    sku,
                    quantity,
                    unit_price: l.unit_price,
                }
            })
            .collect();
        let currency = self
            .currency
            .as_deref()
            .map(|cur| c.currency("currency", cur));
        let lower = |s: String| s.to_lowercase();
        let carrier = c
            .opt_text("carrier", self.carrier.as_deref(), 32)
            .map(lower)
            .unwrap_or_else(|| "own".into());
        let service = c
            .opt_text("service", self.service.as_deref(), 32)
            .map(lower)
            .unwrap_or_else(|| "standard".into());
        // Checked here, not only against the database: an order already
        // ingested under the same reference is answered before any lookup.
        if self
            .warehouse_id
            .is_some_and(|w| !(1..=crate::MAX_ID).contains(&w.0))
        {
            c.fail(
                "warehouse_id",
                format!("must be from 1 to {}", crate::MAX_ID),
            );
        }
        c.finish(NewOrder {
            channel,
            external_ref,
            warehouse_id: self.warehouse_id,
            buyer,
            shipping_address,
            payments,
            lines,
            currency,
            ordered_at: self.ordered_at,
            carrier,
            service,
        })
    }
}

/// Body of `PUT /v1/orders/{business_id}/{order_id}/status`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct StatusRequest {
    pub status: OrderStatus,
    pub note: Option<String>,
}

impl StatusRequest {
    pub fn parse(self) -> Result<(OrderStatus, Option<String>), Vec<FieldError>> {
        let mut c = Check::new();
        let note = c.note("note", self.note.as_deref(), crate::stock::MAX_NOTE);
        c.finish((self.status, note))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Result<NewOrder, Vec<String>> {
        let raw: OrderCreate = serde_json::from_value(v).map_err(|e| vec![e.to_string()])?;
        raw.parse()
            .map_err(|e| e.into_iter().map(|e| e.name).collect())
    }

    #[test]
    fn a_full_order() {
        let o = parse(json!({
            "channel": "webshop", "external_ref": "WS-1001",
            "buyer": {"name": "Ana", "email": "ANA@Example.com"},
            "shipping_address": {"line1": "Calle 1", "city": "Madrid", "country": "es"},
            "payments": [{"method": "card", "amount": "19.90"}],
            "lines": [{"sku": "A", "quantity": 2, "unit_price": 9.95}]
        }));
        let Ok(o) = o else { panic!("refused: {o:?}") };
        assert_eq!(o.buyer.email.as_deref(), Some("ana@example.com"));
        assert_eq!(o.shipping_address.country.as_deref(), Some("ES"));
        assert_eq!(o.lines[0].unit_price, Some(Money(995)));
    }

    #[test]
    fn bad_orders_name_their_fields() {
        let e = parse(json!({"channel": "", "external_ref": "x", "lines": []}))
            .err()
            .unwrap_or_default();
        assert_eq!(e, ["channel", "lines"]);
        let e = parse(json!({"channel": "c", "external_ref": "x", "lines": [{"sku": "A", "quantity": 0}, {"sku": "B", "quantity": -2}]}))
            .err()
            .unwrap_or_default();
        assert_eq!(e, ["lines[0].quantity", "lines[1].quantity"]);
        let e = parse(json!({"channel": "c", "external_ref": "x", "buyer": {"email": "nope"}, "lines": [{"sku": "A", "quantity": 1}]}))
            .err()
            .unwrap_or_default();
        assert_eq!(e, ["buyer.email"]);
        for id in [0, crate::MAX_ID + 1, i64::MAX] {
            let e = parse(json!({"channel": "c", "external_ref": "x", "warehouse_id": id, "lines": [{"sku": "A", "quantity": 1}]}))
                .err()
                .unwrap_or_default();
            assert_eq!(e, ["warehouse_id"], "{id}");
        }
        let max = json!({"channel": "c", "external_ref": "x", "warehouse_id": crate::MAX_ID, "lines": [{"sku": "A", "quantity": 1}]});
        assert!(parse(max).is_ok());
    }

    #[test]
    fn unknown_status_is_refused_by_serde() {
        assert!(serde_json::from_value::<StatusRequest>(json!({"status": "shipped"})).is_err());
        assert!(serde_json::from_value::<StatusRequest>(json!({"status": "packed"})).is_ok());
    }
}

/// An address as sent, with each field within its length and the country
/// an ISO 3166-1 alpha-2 code (upper-cased). Whether the address can be
/// shipped to is another question, answered by [`crate::address::issues`].
fn checked_address(c: &mut Check, a: Address) -> Address {
    Address {
        name: c.opt_text("shipping_address.name", a.name.as_deref(), 200),
        line1: c.opt_text("shipping_address.line1", a.line1.as_deref(), 200),
        line2: c.opt_text("shipping_address.line2", a.line2.as_deref(), 200),
        city: c.opt_text("shipping_address.city", a.city.as_deref(), 100),
        region: c.opt_text("shipping_address.region", a.region.as_deref(), 100),
        postal_code: c.opt_text("shipping_address.postal_code", a.postal_code.as_deref(), 20),
        country: a
            .country
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                let s = s.to_ascii_uppercase();
                if s.len() != 2 || !s.bytes().all(|b| b.is_ascii_uppercase()) {
                    c.fail(
                        "shipping_address.country",
                        "must be an ISO 3166-1 alpha-2 code",
                    );
                }
                s
            }),
    }
}

/// Body of `PUT /v1/orders/{business_id}/{order_id}/address`: the corrected
/// shipping address, whole (fields left out are cleared).
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct AddressChange {
    pub shipping_address: Address,
    /// Why it changed ("customer called with the postcode").
    #[schema(format = "opt-line", max_length = 500)]
    pub note: Option<String>,
}

impl AddressChange {
    pub fn parse(self) -> Result<(Address, Option<String>), Vec<FieldError>> {
        let mut c = Check::new();
        let address = checked_address(&mut c, self.shipping_address);
        let note = c.opt_text("note", self.note.as_deref(), 500);
        c.finish((address, note))
    }
}
