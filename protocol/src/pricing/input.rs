//! The body of `create` and `edit`: typed field by field, then checked as a
//! whole (an edit is checked as the rule it leaves behind).

use super::action::{Action, ActionKind};
use super::condition::{CONDITION_IDS, Condition, ConditionError, MAX_TEXT};
use super::fields::Fields;
use super::{MAX_LIST, MAX_NAME, RuleFields, RuleStatus};
use crate::validate::Check;
use crate::{FieldError, PriceListId};
use serde_json::{Map, Number, Value};

/// The rule fields of a `create` or `edit` body. Nothing is required by the
/// wire format; a created rule needs its price lists and an action. In an
/// edit, an absent (or `null`) field keeps its value. A field of the wrong
/// type or an unknown field is a field error (201), like a wrong value.
#[derive(Debug, Clone, Default, PartialEq, utoipa::ToSchema)]
pub struct RuleInput {
    /// Where the rule stands among its business's rules, 1 first. Create:
    /// inserted there (default: last); edit: moved there. The others shift,
    /// so positions stay 1..n.
    #[schema(minimum = 1)]
    pub position_id: Option<i64>,
    /// The price list whose prices the rule reads (> 0). Required on create.
    #[schema(minimum = 1)]
    pub origin_price_list_id: Option<i64>,
    /// The price list the rule writes (> 0). Required on create. It may be
    /// the origin list: the rule then adjusts that list in place.
    #[schema(minimum = 1)]
    pub target_price_list_id: Option<i64>,
    /// `increase_percent`, `decrease_percent` (percentage of the origin
    /// price), `add_fixed` (a signed amount added), `set_fixed` (that
    /// amount), `round_to` (the nearest multiple of the amount). Required on
    /// create unless `type` and `value` are given.
    pub origin_action_id: Option<String>,
    /// Decimal string: a percentage (at most 4 decimals; increase up to
    /// 1000, decrease up to 100) or an amount (at most 2 decimals).
    pub origin_action_value: Option<String>,
    /// `all` (default), `sku_prefix`, `brand`, `category`, `channel`,
    /// `price_below`, `price_above` (on the origin price, strictly).
    pub condition_id: Option<String>,
    /// The condition's text (at most 100 characters) or amount; empty for
    /// `all`. Brand, category and channel compare without regard to case.
    pub condition_value: Option<String>,
    /// 1 active (default): run by a job that names no rule; 0 inactive.
    #[schema(minimum = 0, maximum = 1)]
    pub status: Option<i64>,
    /// A label, at most 100 characters; blank clears it.
    pub name: Option<String>,
    /// Extended form of the action, instead of `origin_action_id`:
    /// `percentage` (`value` > 0 raises the price by that percent, < 0
    /// lowers it) or `fixed` (`value` is a signed amount added).
    /// A percentage is -100 to 1000 (at most 4 decimals, not 0); an amount
    /// -999999999999999.99 to 999999999999999.99 (at most 2 decimals, not
    /// 0). A price a rule would take below 0 or above 999999999999999.99 is
    /// left alone (counted in `items_skipped`).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    #[schema(value_type = Option<f64>, minimum = -999_999_999_999_999.99, maximum = 999_999_999_999_999.99)]
    pub value: Option<Number>,
    /// Channels the rule is limited to: an item matches if it has a
    /// publication link in one of them. Empty: every item. At most 50.
    pub channels: Option<Vec<String>>,
    /// Further conditions, all of which must hold too: condition ids other
    /// than `all` as keys, their values as strings (amounts may be numbers),
    /// e.g. `{"brand": "Acme", "price_above": "5.00"}`. `{}` clears them.
    #[schema(value_type = Option<Object>)]
    pub conditions: Option<Map<String, Value>>,
}

const KNOWN: [&str; 13] = [
    "position_id",
    "origin_price_list_id",
    "target_price_list_id",
    "origin_action_id",
    "origin_action_value",
    "condition_id",
    "condition_value",
    "status",
    "name",
    "type",
    "value",
    "channels",
    "conditions",
];

/// A body read as [`RuleInput`], with what was wrong with its types.
#[derive(Debug, Clone)]
pub struct RuleRequest {
    input: RuleInput,
    type_errors: Vec<FieldError>,
}

/// A checked rule and the position asked for, if any.
pub type Checked = (RuleFields, Option<i64>);

impl RuleRequest {
    /// Reads a body; only a body that is not an object fails here, the
    /// other errors come with the checks.
    pub fn from_json(body: &Value) -> Result<Self, Vec<FieldError>> {
        let mut f = Fields::new(body, &KNOWN, "a pricing rule", "")?;
        let input = RuleInput {
            position_id: f.int("position_id"),
            origin_price_list_id: f.int("origin_price_list_id"),
            target_price_list_id: f.int("target_price_list_id"),
            origin_action_id: f.string("origin_action_id"),
            origin_action_value: f.string("origin_action_value"),
            condition_id: f.string("condition_id"),
            condition_value: f.string("condition_value"),
            status: f.int("status"),
            name: f.string("name"),
            kind: f.string("type"),
            value: f.number("value"),
            channels: f.strings("channels"),
            conditions: f.object("conditions").cloned(),
        };
        Ok(Self {
            input,
            type_errors: f.into_errors(),
        })
    }

    pub fn new(input: RuleInput) -> Self {
        Self {
            input,
            type_errors: Vec::new(),
        }
    }

    /// The fields whose JSON type was wrong, for a request that cannot be
    /// checked further.
    pub fn into_type_errors(self) -> Vec<FieldError> {
        self.type_errors
    }

    pub fn create(self) -> Result<Checked, Vec<FieldError>> {
        self.check(None)
    }

    /// The rule `current` becomes with this edit.
    pub fn edit(self, current: &RuleFields) -> Result<Checked, Vec<FieldError>> {
        self.check(Some(current))
    }

    fn check(self, current: Option<&RuleFields>) -> Result<Checked, Vec<FieldError>> {
        let i = self.input;
        let mut c = Check::new();
        let name = match &i.name {
            Some(n) => c.opt_text("name", Some(n), MAX_NAME),
            None => current.and_then(|r| r.name.clone()),
        };
        let origin = price_list(
            &mut c,
            "origin_price_list_id",
            i.origin_price_list_id,
            current.map(|r| r.origin),
        );
        let target = price_list(
            &mut c,
            "target_price_list_id",
            i.target_price_list_id,
            current.map(|r| r.target),
        );
        let action = action(&mut c, &i, current.map(|r| r.action));
        let condition = condition(&mut c, &i, current.map(|r| &r.condition));
        let conditions = match &i.conditions {
            Some(m) => conditions(&mut c, m),
            None => current.map(|r| r.conditions.clone()).unwrap_or_default(),
        };
        let channels = match i.channels {
            Some(list) => channels(&mut c, list),
            None => current.map(|r| r.channels.clone()).unwrap_or_default(),
        };
        let status = match i.status {
            Some(s) => RuleStatus::from_i64(s).unwrap_or_else(|| {
                c.fail("status", "must be 0 (inactive) or 1 (active)");
                RuleStatus::Active
            }),
            None => current.map_or(RuleStatus::Active, |r| r.status),
        };
        if i.position_id.is_some_and(|p| p < 1) {
            c.fail("position_id", "must be 1 or more");
        }
        let checked = c.finish(());
        // A field whose type was wrong is named once, not again as missing.
        let mut errors = self.type_errors;
        let typed: Vec<String> = errors.iter().map(|e| e.name.clone()).collect();
        if let Err(more) = checked {
            errors.extend(more.into_iter().filter(|e| !typed.contains(&e.name)));
        }
        match (errors.is_empty(), origin, target, action) {
            (true, Some(origin), Some(target), Some(action)) => Ok((
                RuleFields {
                    name,
                    origin,
                    target,
                    action,
                    condition,
                    conditions,
                    channels,
                    status,
                },
                i.position_id,
            )),
            _ if errors.is_empty() => Err(vec![FieldError::new("body", "is incomplete")]),
            _ => Err(errors),
        }
    }
}

fn price_list(
    c: &mut Check,
    name: &str,
    given: Option<i64>,
    current: Option<PriceListId>,
) -> Option<PriceListId> {
    match given {
        Some(id) if id > 0 => Some(PriceListId(id)),
        Some(_) => {
            c.fail(name, "must be greater than 0");
            None
        }
        None if current.is_none() => {
            c.fail(name, "is required");
            None
        }
        None => current,
    }
}

/// The action from `origin_action_id`/`origin_action_value` or from
/// `type`/`value`. In an edit, a value alone keeps the current kind, while
/// a kind alone needs its value again (a value rarely means the same thing
/// to another kind).
fn action(c: &mut Check, i: &RuleInput, current: Option<Action>) -> Option<Action> {
    let by_id = i.origin_action_id.is_some() || i.origin_action_value.is_some();
    let by_type = i.kind.is_some() || i.value.is_some();
    if by_id && by_type {
        c.fail(
            "type",
            "give origin_action_id and origin_action_value, or type and value, not both",
        );
        return None;
    }
    if by_type {
        let kind = i
            .kind
            .clone()
            .or_else(|| current.and_then(|a| a.as_type()).map(|t| t.0.to_owned()));
        return match (kind, &i.value) {
            (None, _) => {
                c.fail("type", "is required with value");
                None
            }
            (Some(_), None) => {
                c.fail("value", "is required with type");
                None
            }
            (Some(kind), Some(value)) => Action::from_type(&kind, value)
                .map_err(|(field, e)| c.fail(field, e))
                .ok(),
        };
    }
    let kind = match &i.origin_action_id {
        Some(id) => match ActionKind::parse(id) {
            Some(k) => Some(k),
            None => {
                c.fail(
                    "origin_action_id",
                    format!("must be one of {}", ActionKind::names()),
                );
                return None;
            }
        },
        None => current.map(|a| a.kind()),
    };
    let value = match (&i.origin_action_value, &i.origin_action_id) {
        (Some(v), _) => Some(v.clone()),
        (None, None) => current.map(|a| a.value_string()),
        (None, Some(_)) => None,
    };
    match (kind, value) {
        (None, _) => {
            c.fail("origin_action_id", "is required (or type and value)");
            None
        }
        (Some(_), None) => {
            c.fail("origin_action_value", "is required");
            None
        }
        (Some(kind), Some(v)) => Action::new(kind, &v)
            .map_err(|e| c.fail("origin_action_value", e))
            .ok(),
    }
}

/// In an edit, a new `condition_id` without a value means no value; a value
/// alone applies to the current condition.
fn condition(c: &mut Check, i: &RuleInput, current: Option<&Condition>) -> Condition {
    let (id, value) = match (&i.condition_id, &i.condition_value) {
        (None, None) => return current.cloned().unwrap_or(Condition::All),
        (Some(id), v) => (id.clone(), v.clone().unwrap_or_default()),
        (None, Some(v)) => (current.map_or("all", Condition::id).to_owned(), v.clone()),
    };
    match Condition::new(&id, &value) {
        Ok(cond) => cond,
        Err(ConditionError::UnknownId) => {
            c.fail(
                "condition_id",
                format!("must be one of {}", CONDITION_IDS.join(", ")),
            );
            Condition::All
        }
        Err(ConditionError::Value(e)) => {
            c.fail("condition_value", e);
            Condition::All
        }
    }
}

fn conditions(c: &mut Check, m: &Map<String, Value>) -> Vec<Condition> {
    let mut out = Vec::new();
    for (key, v) in m {
        let name = format!("conditions.{key}");
        if key == "all" || !CONDITION_IDS.contains(&key.as_str()) {
            c.fail(
                name,
                format!("must be one of {}", CONDITION_IDS[1..].join(", ")),
            );
            continue;
        }
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) if key.starts_with("price_") => n.to_string(),
            _ => {
                c.fail(name, "must be a string");
                continue;
            }
        };
        match Condition::new(key, &text) {
            Ok(cond) => out.push(cond),
            Err(ConditionError::Value(e)) => c.fail(name, e),
            Err(ConditionError::UnknownId) => c.fail(name, "is not a condition"),
        }
    }
    out.sort_by_key(|cond| CONDITION_IDS.iter().position(|id| *id == cond.id()));
    out
}

fn channels(c: &mut Check, list: Vec<String>) -> Vec<String> {
    c.bounded("channels", &list, MAX_LIST);
    let mut out: Vec<String> = Vec::new();
    for (i, ch) in list.iter().enumerate() {
        let name = format!("channels[{i}]");
        let ch = c.code(&name, ch, MAX_TEXT);
        if out.iter().any(|o| o.eq_ignore_ascii_case(&ch)) {
            c.fail(name, "is listed twice");
        }
        out.push(ch);
    }
    out
}
