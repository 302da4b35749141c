//! The records an event names by id, per kind: what a node receiving the
//! event from another must find in the sender's business (and, for an
//! edge, in a warehouse it serves) before applying it. One table for the
//! cloud checking an edge's events and for an edge checking the cloud's
//! pages, so a kind cannot gain a reference the checks do not know.
//!
//! A reference is a path into the payload: `/item_id`, `/takes/*/line_id`
//! (`*`: every element of an array), or `**/order_id` (that key at any
//! depth, for payloads whose shape varies, like a station's result). A
//! path that leads nowhere, or to null, names nothing: optional fields
//! stay optional.

use serde_json::Value;

/// A kind of record events refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entity {
    /// The tenant itself: a nested `business_id` must be the sender's.
    Business,
    Warehouse,
    Item,
    Order,
    /// An inbound (purchase) order.
    Inbound,
    Wave,
    PickLine,
    Shipment,
    DispatchRun,
    Printer,
    PrintJob,
    /// An API key (its hash travels to edges).
    Key,
    /// A location in a warehouse.
    Location,
    /// Received goods to put away.
    PutawayTask,
    /// A cycle count.
    Count,
    /// Stock to move from reserve to a pick location.
    ReplenishTask,
    /// A customer return.
    Return,
    /// A sales channel.
    Channel,
}

impl Entity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Business => "business",
            Self::Warehouse => "warehouse",
            Self::Item => "item",
            Self::Order => "order",
            Self::Inbound => "inbound order",
            Self::Wave => "wave",
            Self::PickLine => "pick line",
            Self::Shipment => "shipment",
            Self::DispatchRun => "dispatch run",
            Self::Printer => "printer",
            Self::PrintJob => "print job",
            Self::Key => "API key",
            Self::Location => "location",
            Self::PutawayTask => "putaway task",
            Self::Count => "count",
            Self::ReplenishTask => "replenishment task",
            Self::Return => "return",
            Self::Channel => "channel",
        }
    }

    /// Records every node numbers in its own id range (`node << 40` up):
    /// one an edge makes must carry an id of that edge's range, so no box
    /// can take an id another box (of any business) will use.
    pub fn numbered_per_node(self) -> bool {
        matches!(
            self,
            Self::Wave
                | Self::PickLine
                | Self::Shipment
                | Self::DispatchRun
                | Self::PrintJob
                | Self::Location
                | Self::PutawayTask
                | Self::Count
                | Self::ReplenishTask
                | Self::Return
        )
    }
}

/// What the event does with the record it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Reads or changes a record that must already be there.
    Names,
    /// Makes the record (or closes one it may have made earlier): if one is
    /// there under that id, it must be the sender's business's; if not, an
    /// edge must number it in its own range.
    Makes,
}

/// One reference of a kind's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reference {
    pub path: &'static str,
    pub entity: Entity,
    pub role: Role,
}

pub const fn names(path: &'static str, entity: Entity) -> Reference {
    Reference {
        path,
        entity,
        role: Role::Names,
    }
}

pub const fn makes(path: &'static str, entity: Entity) -> Reference {
    Reference {
        path,
        entity,
        role: Role::Makes,
    }
}

/// The ids a path leads to in `payload`, in document order. A value there
/// that is not an integer is an error: a reference that cannot be checked
/// must not be applied.
pub fn ids(payload: &Value, path: &str) -> Result<Vec<i64>, String> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut out = Vec::new();
    walk(payload, &segments, path, &mut out)?;
    Ok(out)
}

fn walk(v: &Value, segments: &[&str], path: &str, out: &mut Vec<i64>) -> Result<(), String> {
    let Some((first, rest)) = segments.split_first() else {
        return match v {
            Value::Null => Ok(()),
            Value::Number(n) => n
                .as_i64()
                .map(|id| out.push(id))
                .ok_or_else(|| format!("{} is not an id: {n}", field(path))),
            other => Err(format!("{} is not an id: {}", field(path), kind_of(other))),
        };
    };
    match *first {
        "*" => match v {
            Value::Array(items) => items.iter().try_for_each(|i| walk(i, rest, path, out)),
            _ => Ok(()),
        },
        "**" => {
            walk(v, rest, path, out)?;
            match v {
                Value::Array(items) => items.iter().try_for_each(|i| walk(i, segments, path, out)),
                Value::Object(fields) => fields
                    .values()
                    .try_for_each(|f| walk(f, segments, path, out)),
                _ => Ok(()),
            }
        }
        key => match v.get(key) {
            Some(next) => walk(next, rest, path, out),
            None => Ok(()),
        },
    }
}

/// The path as a field name for messages: `order_id`, `takes/*/line_id`.
fn field(path: &str) -> &str {
    path.trim_start_matches("**/").trim_start_matches('/')
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether `path` reaches the leaf at `at` (keys, with array indexes as
/// `None`): for the check that every id in a payload is a declared
/// reference.
pub fn covers(path: &str, at: &[Option<&str>]) -> bool {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    matches_at(&segments, at)
}

fn matches_at(segments: &[&str], at: &[Option<&str>]) -> bool {
    match (segments.split_first(), at.split_first()) {
        (None, None) => true,
        (Some((&"**", rest)), _) => {
            matches_at(rest, at)
                || at
                    .split_first()
                    .is_some_and(|(_, tail)| matches_at(segments, tail))
        }
        (Some((&"*", rest)), Some((None, tail))) => matches_at(rest, tail),
        (Some((key, rest)), Some((Some(k), tail))) if key == k => matches_at(rest, tail),
        _ => false,
    }
}

/// Whether a key holds an id by the project's naming: `id`, or `<what>_id`.
fn is_id_key(key: &str) -> bool {
    key == "id" || key.ends_with("_id")
}

/// The integer ids in `payload` that none of the kind's references reach
/// (the top-level `business_id`, which is always checked, aside): each is a
/// reference a receiving node would apply unchecked. The tests hold every
/// payload the engine writes to this.
pub fn unreferenced(t: &super::EventType, payload: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = Vec::new();
    leaves(payload, &mut at, &mut |at, v| {
        let key = at.last().copied().flatten();
        if !key.is_some_and(is_id_key) || !(v.is_i64() || v.is_u64()) {
            return;
        }
        if at == [Some("business_id")] || t.refs.iter().any(|r| covers(r.path, at)) {
            return;
        }
        let path: Vec<&str> = at.iter().map(|k| k.unwrap_or("*")).collect();
        out.push(format!("{}: /{} = {v}", t.name(), path.join("/")));
    });
    out
}

fn leaves<'a>(
    v: &'a Value,
    at: &mut Vec<Option<&'a str>>,
    f: &mut impl FnMut(&[Option<&str>], &Value),
) {
    match v {
        Value::Object(fields) => {
            for (k, child) in fields {
                at.push(Some(k));
                leaves(child, at, f);
                at.pop();
            }
        }
        Value::Array(items) => {
            for child in items {
                at.push(None);
                leaves(child, at, f);
                at.pop();
            }
        }
        leaf => f(at, leaf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unreferenced_ids_are_found() {
        let t = crate::catalogue::lookup("pick.scanned").expect("catalogued");
        let p = json!({"business_id": 1, "wave_id": 2, "order_id": 3, "line_id": 4,
                       "takes": [{"line_id": 4, "quantity": 1, "tote_id": 9}],
                       "quantity": 1, "sku": "A"});
        assert_eq!(unreferenced(t, &p), ["pick.scanned: /takes/*/tote_id = 9"]);
    }

    /// Every id a record payload's schema declares (nested records and
    /// arrays included) is a reference of its kind: a field added to
    /// `Wave`, say, cannot slip past the ownership checks.
    #[test]
    fn record_payloads_declare_their_ids() {
        use crate::catalogue::{CATALOGUE, Payload, schema::record_schemas};
        let components = record_schemas(CATALOGUE.iter());
        let mut missing = Vec::new();
        for t in CATALOGUE {
            let Payload::Record { name, .. } = t.payload else {
                continue;
            };
            let Some(schema) = components.get(name().as_ref()) else {
                continue;
            };
            let mut at = Vec::new();
            schema_ids(schema, &components, &mut at, 0, &mut |at| {
                let at: Vec<Option<&str>> = at.iter().map(|k| k.as_deref()).collect();
                // Ids of records no business owns (a release), and of kinds
                // that never leave the cloud (documents, CRM records).
                let exempt = matches!(
                    (t.name(), at.as_slice()),
                    ("release.published", [Some("id")])
                        // A price list is a number within the business, not
                        // a record of its own.
                        | ("item.created" | "item.updated", [Some("prices"), None, Some("price_list_id")])
                        | (
                            "document.attached" | "crm.department_saved" | "crm.form_saved",
                            _
                        )
                );
                if !exempt
                    && at != [Some("business_id")]
                    && !t.refs.iter().any(|r| covers(r.path, &at))
                {
                    missing.push(format!("{}: {at:?}", t.name()));
                }
            });
        }
        assert_eq!(missing, Vec::<String>::new());
    }

    /// Walks a JSON Schema for integer properties named like ids.
    fn schema_ids(
        s: &Value,
        components: &serde_json::Map<String, Value>,
        at: &mut Vec<Option<String>>,
        depth: usize,
        found: &mut impl FnMut(&[Option<String>]),
    ) {
        if depth > 12 {
            return;
        }
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or_default();
            if let Some(target) = components.get(name) {
                schema_ids(target, components, at, depth + 1, found);
            }
            return;
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            for part in s.get(key).and_then(Value::as_array).into_iter().flatten() {
                schema_ids(part, components, at, depth + 1, found);
            }
        }
        if let Some(items) = s.get("items") {
            at.push(None);
            schema_ids(items, components, at, depth + 1, found);
            at.pop();
        }
        // Typed ids (`ItemId`, ...) are references to schemas of their own.
        let integer = |p: &Value| {
            let p = p
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| components.get(r.rsplit('/').next().unwrap_or_default()))
                .unwrap_or(p);
            p.get("type").is_some_and(|t| {
                t == "integer"
                    || t.as_array()
                        .is_some_and(|a| a.iter().any(|x| x == "integer"))
            })
        };
        for (k, p) in s
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            at.push(Some(k.clone()));
            if is_id_key(k) && integer(p) {
                found(at);
            } else {
                schema_ids(p, components, at, depth + 1, found);
            }
            at.pop();
        }
    }

    #[test]
    fn paths() {
        let p = json!({
            "wave_id": 3,
            "takes": [{"line_id": 7, "quantity": 1}, {"line_id": 8, "quantity": 2}],
            "result": {"pack": {"shipment": {"id": 5, "order_id": 9}}, "order_id": null},
            "missing": null,
        });
        assert_eq!(ids(&p, "/wave_id"), Ok(vec![3]));
        assert_eq!(ids(&p, "/takes/*/line_id"), Ok(vec![7, 8]));
        assert_eq!(ids(&p, "**/order_id"), Ok(vec![9]));
        assert_eq!(ids(&p, "**/shipment/id"), Ok(vec![5]));
        assert_eq!(ids(&p, "/nowhere/id"), Ok(vec![]));
        assert_eq!(ids(&p, "/missing"), Ok(vec![]));
        // An array where an object was expected, and the reverse: nothing.
        assert_eq!(ids(&p, "/takes/line_id"), Ok(vec![]));
        assert_eq!(ids(&p, "/result/*/id"), Ok(vec![]));
    }

    #[test]
    fn what_is_not_an_id_is_an_error() {
        for bad in [
            json!({"order_id": "7"}),
            json!({"order_id": 7.5}),
            json!({"order_id": 1e300}),
            json!({"order_id": 18446744073709551615u64}),
            json!({"order_id": [7]}),
            json!({"order_id": true}),
        ] {
            let e = ids(&bad, "/order_id").expect_err("refused");
            assert!(e.starts_with("order_id is not an id"), "{e}");
        }
        let e = ids(&json!({"a": [{"order_id": {}}]}), "**/order_id").expect_err("refused");
        assert_eq!(e, "order_id is not an id: an object");
    }

    #[test]
    fn coverage() {
        assert!(covers("/wave_id", &[Some("wave_id")]));
        assert!(!covers("/wave_id", &[Some("result"), Some("wave_id")]));
        assert!(covers(
            "/takes/*/line_id",
            &[Some("takes"), None, Some("line_id")]
        ));
        assert!(covers(
            "**/order_id",
            &[Some("result"), Some("pack"), Some("order_id")]
        ));
        assert!(covers("**/order_id", &[Some("order_id")]));
        assert!(covers(
            "**/shipment/id",
            &[Some("result"), Some("shipment"), Some("id")]
        ));
        assert!(!covers("**/shipment/id", &[Some("result"), Some("id")]));
    }
}
