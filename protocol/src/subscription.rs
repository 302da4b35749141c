//! What a live event stream (a websocket of a screen or a station) asks
//! for, and which events of the log it gets: by kind, warehouse and
//! station. Pure, so the rules are tested without a socket.

use crate::FieldError;
use crate::event::Event;
use serde_json::Value;

/// The most kinds one subscription may name.
pub const MAX_KINDS: usize = 64;

/// A subscription's filters. Empty filters let everything through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscription {
    /// Exact kinds (`order.status_changed`) or families (`order.*`).
    kinds: Vec<String>,
    warehouse_id: Option<i64>,
    station: Option<String>,
}

impl Subscription {
    /// Reads the query's filters: `kinds` comma-separated, `warehouse_id`,
    /// `station`. Every problem is named.
    pub fn parse(
        kinds: Option<&str>,
        warehouse_id: Option<i64>,
        station: Option<&str>,
    ) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut list: Vec<String> = Vec::new();
        for k in kinds.unwrap_or("").split(',').map(str::trim) {
            if k.is_empty() {
                continue;
            }
            if !is_kind_pattern(k) {
                errors.push(FieldError::new(
                    "kinds",
                    format!("{k:?} is not an event kind such as order.status_changed or order.*"),
                ));
            } else if !crate::catalogue::pattern_is_known(k) {
                errors.push(FieldError::new(
                    "kinds",
                    format!("{k:?} names no event type (docs/events.md lists them)"),
                ));
            } else if !list.iter().any(|l| l == k) {
                list.push(k.to_owned());
            }
        }
        if list.len() > MAX_KINDS {
            errors.push(FieldError::new(
                "kinds",
                format!("names more than {MAX_KINDS} kinds"),
            ));
        }
        if warehouse_id.is_some_and(|w| w < 1) {
            errors.push(FieldError::new("warehouse_id", "must be 1 or more"));
        }
        let station = station.map(str::trim).filter(|s| !s.is_empty());
        if station.is_some_and(|s| s.chars().count() > 100) {
            errors.push(FieldError::new("station", "must be at most 100 characters"));
        }
        if errors.is_empty() {
            Ok(Self {
                kinds: list,
                warehouse_id,
                station: station.map(str::to_owned),
            })
        } else {
            Err(errors)
        }
    }

    /// Whether `e` goes to this subscriber. An event that names no
    /// warehouse (or no station) passes those filters: catalog changes
    /// concern every warehouse, and most events no station.
    pub fn matches(&self, e: &Event) -> bool {
        let kind_ok = self.kinds.is_empty()
            || self.kinds.iter().any(|k| match k.strip_suffix('*') {
                Some(family) => e.kind.starts_with(family),
                None => *k == e.kind,
            });
        kind_ok
            && self
                .warehouse_id
                .is_none_or(|w| named(&e.payload, "warehouse_id", 1).is_none_or(|v| v == w))
            && self.station.as_deref().is_none_or(|s| {
                named_str(&e.payload, "station", 1).is_none_or(|v| v.eq_ignore_ascii_case(s))
            })
    }
}

/// `family.name`, `family.*`, of lowercase letters, digits and `_`.
fn is_kind_pattern(k: &str) -> bool {
    let body = k.strip_suffix(".*").unwrap_or(k);
    let words: Vec<&str> = body.split('.').collect();
    k.len() <= 100
        && !words.is_empty()
        && words.iter().all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// The first integer field `name` in `v` or in objects `depth` levels
/// below it (payloads wrap their record: `{"order": {"warehouse_id": 1}}`).
fn named(v: &Value, name: &str, depth: u8) -> Option<i64> {
    let obj = v.as_object()?;
    if let Some(n) = obj.get(name).and_then(Value::as_i64) {
        return Some(n);
    }
    if depth == 0 {
        return None;
    }
    obj.values().find_map(|v| named(v, name, depth - 1))
}

fn named_str<'a>(v: &'a Value, name: &str, depth: u8) -> Option<&'a str> {
    let obj = v.as_object()?;
    if let Some(s) = obj.get(name).and_then(Value::as_str) {
        return Some(s);
    }
    if depth == 0 {
        return None;
    }
    obj.values().find_map(|v| named_str(v, name, depth - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventId;
    use serde_json::json;

    fn event(kind: &str, payload: Value) -> Event {
        Event {
            seq: 1,
            id: EventId(uuid::Uuid::nil()),
            origin: "cloud".into(),
            business_id: None,
            kind: kind.into(),
            version: 1,
            payload,
            at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    fn names(r: Result<Subscription, Vec<FieldError>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn kinds_are_exact_or_families() {
        let s =
            Subscription::parse(Some("order.status_changed, pick.*"), None, None).expect("valid");
        assert!(s.matches(&event("order.status_changed", json!({}))));
        assert!(s.matches(&event("pick.scanned", json!({}))));
        assert!(!s.matches(&event("order.created", json!({}))));
        assert!(!s.matches(&event("picking.x", json!({}))));
        let all = Subscription::parse(None, None, None).expect("valid");
        assert!(all.matches(&event("anything.at_all", json!({}))));
    }

    #[test]
    fn warehouses_and_stations_filter_what_names_them() {
        let s = Subscription::parse(None, Some(2), Some("PACK-1")).expect("valid");
        assert!(s.matches(&event("stock.moved", json!({"warehouse_id": 2}))));
        assert!(!s.matches(&event("stock.moved", json!({"warehouse_id": 1}))));
        assert!(!s.matches(&event(
            "order.status_changed",
            json!({"order": {"id": 4, "warehouse_id": 1}})
        )));
        assert!(
            s.matches(&event("item.updated", json!({"id": 4}))),
            "names none"
        );
        assert!(s.matches(&event(
            "station.scanned",
            json!({"station": "pack-1", "warehouse_id": 2})
        )));
        assert!(!s.matches(&event("station.scanned", json!({"station": "pack-2"}))));
        // Deeper than the payload's own records is not looked at.
        assert!(s.matches(&event("x.y", json!({"a": {"b": {"warehouse_id": 1}}}))));
    }

    #[test]
    fn bad_filters_are_named() {
        assert_eq!(
            names(Subscription::parse(
                Some("Order.Created,order..x,*"),
                Some(0),
                None
            )),
            ["kinds", "kinds", "kinds", "warehouse_id"]
        );
        assert_eq!(
            names(Subscription::parse(
                Some("order.shipped,nothing.*,key.created,order.created"),
                None,
                None
            )),
            ["kinds", "kinds", "kinds"],
            "unknown, and internal, types are named"
        );
        let every: Vec<&str> = crate::catalogue::public().map(|t| t.name()).collect();
        assert!(every.len() <= MAX_KINDS);
        assert!(Subscription::parse(Some(&every.join(",")), None, None).is_ok());
        assert_eq!(
            names(Subscription::parse(None, None, Some(&"s".repeat(101)))),
            ["station"]
        );
        assert!(Subscription::parse(Some(" , order.*,order.*"), None, Some(" ")).is_ok());
    }
}
