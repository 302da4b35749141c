//! Pricing rules (automation): each rule reads an item's price in an origin
//! price list, changes it by its action and writes it to a target list, for
//! the items its conditions select. A business's rules are ordered by a
//! dense position 1..n and a job applies them in that order.

mod action;
mod condition;
mod fields;
mod input;
mod job;

pub use action::{Action, ActionKind, div_round, parse_decimal};
pub use condition::{CONDITION_IDS, Condition, ItemFacts};
pub use input::{Checked, RuleInput, RuleRequest};
pub use job::{
    JobRequest, JobSpec, MoveEntry, MoveRequest, PriceChange, RuleMove, RulePosition, RuleRun,
};

use crate::PriceListId;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A business holds at most this many rules (a job runs them all).
pub const MAX_RULES: usize = 500;
pub const MAX_NAME: usize = 100;
/// Channels a rule may be limited to.
pub const MAX_LIST: usize = 50;

/// `status`: whether a job that names no rule runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleStatus {
    Inactive = 0,
    Active = 1,
}

impl RuleStatus {
    pub fn from_i64(v: i64) -> Option<Self> {
        match v {
            0 => Some(Self::Inactive),
            1 => Some(Self::Active),
            _ => None,
        }
    }

    pub fn as_i64(self) -> i64 {
        self as i64
    }
}

/// A checked rule, without its id and position.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleFields {
    pub name: Option<String>,
    pub origin: PriceListId,
    pub target: PriceListId,
    pub action: Action,
    /// `condition_id` with `condition_value`.
    pub condition: Condition,
    /// The `conditions` object, in the order of [`CONDITION_IDS`].
    pub conditions: Vec<Condition>,
    pub channels: Vec<String>,
    pub status: RuleStatus,
}

impl RuleFields {
    /// Whether the rule changes this item: every condition holds, and the
    /// item is published in one of the rule's channels, if it names any.
    pub fn applies_to(&self, item: &ItemFacts) -> bool {
        self.condition.holds(item)
            && self.conditions.iter().all(|c| c.holds(item))
            && (self.channels.is_empty()
                || self
                    .channels
                    .iter()
                    .any(|c| Condition::Channel(c.clone()).holds(item)))
    }
}

/// A stored rule.
#[derive(Debug, Clone, PartialEq)]
pub struct PricingRule {
    pub id: i64,
    pub position: i64,
    pub fields: RuleFields,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A rule as answered: the spec's fields (`id` and `position_id` as
/// strings), then the extended ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RuleRecord {
    pub id: String,
    /// 1 for the rule applied first.
    pub position_id: String,
    pub origin_price_list_id: i64,
    pub target_price_list_id: i64,
    pub origin_action_id: String,
    pub origin_action_value: String,
    pub condition_id: String,
    pub condition_value: String,
    /// 1 active, 0 inactive.
    pub status: i64,
    pub name: Option<String>,
    /// The action as `percentage` or `fixed` with `value`; null for
    /// `set_fixed` and `round_to`, which have no such form.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub value: Option<f64>,
    pub channels: Vec<String>,
    pub conditions: BTreeMap<String, String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl PricingRule {
    pub fn record(&self) -> RuleRecord {
        let f = &self.fields;
        let as_type = f.action.as_type();
        RuleRecord {
            id: self.id.to_string(),
            position_id: self.position.to_string(),
            origin_price_list_id: f.origin.0,
            target_price_list_id: f.target.0,
            origin_action_id: f.action.kind().as_str().to_owned(),
            origin_action_value: f.action.value_string(),
            condition_id: f.condition.id().to_owned(),
            condition_value: f.condition.value_string(),
            status: f.status.as_i64(),
            name: f.name.clone(),
            kind: as_type.map(|t| t.0.to_owned()),
            value: as_type.map(|t| t.1),
            channels: f.channels.clone(),
            conditions: f
                .conditions
                .iter()
                .map(|c| (c.id().to_owned(), c.value_string()))
                .collect(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// Puts `id` at `position` (1 first) in `order`, a business's rule ids by
/// position: moved if it is there, inserted if not; the others shift, so
/// positions stay 1..n. The error says which positions are possible.
pub fn place(order: &mut Vec<i64>, id: i64, position: i64) -> Result<(), String> {
    let at = order.iter().position(|x| *x == id);
    let last = order.len() as i64 + i64::from(at.is_none());
    if !(1..=last).contains(&position) {
        return Err(format!("must be between 1 and {last}"));
    }
    if let Some(i) = at {
        order.remove(i);
    }
    order.insert((position - 1) as usize, id);
    Ok(())
}

/// The rules of `after` whose position is not what it was in `before`,
/// with their new positions (1 first), in position order.
pub fn moved(before: &[i64], after: &[i64]) -> Vec<(i64, i64)> {
    after
        .iter()
        .enumerate()
        .filter(|(i, id)| before.get(*i) != Some(id))
        .map(|(i, id)| (*id, i as i64 + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn create(body: serde_json::Value) -> Result<Checked, Vec<String>> {
        RuleRequest::from_json(&body)
            .and_then(RuleRequest::create)
            .map_err(|e| {
                e.into_iter()
                    .map(|e| format!("{}: {}", e.name, e.status))
                    .collect()
            })
    }

    fn names(r: Result<Checked, Vec<String>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.split(':').next().unwrap_or_default().to_owned())
            .collect()
    }

    #[test]
    fn a_minimal_rule_takes_the_defaults() {
        let r = create(json!({"origin_price_list_id": 1, "target_price_list_id": 2,
            "origin_action_id": "increase_percent", "origin_action_value": "10"}));
        let Ok((f, position)) = r else {
            panic!("{r:?}")
        };
        assert_eq!(
            (f.condition, f.status, position),
            (Condition::All, RuleStatus::Active, None)
        );
    }

    #[test]
    fn every_wrong_field_is_named_once() {
        let r = create(
            json!({"position_id": "3", "origin_price_list_id": 0, "target_price_list_id": "x",
            "origin_action_id": "double", "condition_id": "brand", "status": 2, "name": 5,
            "channels": ["web", "web", "a b"], "conditions": {"size": "M", "price_below": -1}, "colour": "red"}),
        );
        assert_eq!(
            names(r),
            [
                "colour",
                "position_id",
                "target_price_list_id",
                "name",
                "origin_price_list_id",
                "origin_action_id",
                "condition_value",
                "conditions.price_below",
                "conditions.size",
                "channels[1]",
                "channels[2]",
                "status"
            ]
        );
    }

    #[test]
    fn the_extended_form_maps_onto_the_spec_fields() {
        let r = create(
            json!({"name": "Summer", "origin_price_list_id": 1, "target_price_list_id": 1,
            "type": "percentage", "value": -15, "channels": ["amazon"],
            "conditions": {"brand": "Acme", "price_above": 5}}),
        );
        let Ok((f, _)) = r else { panic!("{r:?}") };
        let rule = PricingRule {
            id: 7,
            position: 2,
            fields: f,
            created_at: crate::now(),
            updated_at: crate::now(),
        };
        let rec = serde_json::to_value(rule.record()).unwrap_or_default();
        assert_eq!(rec["id"], "7");
        assert_eq!(rec["position_id"], "2");
        assert_eq!(rec["origin_action_id"], "decrease_percent");
        assert_eq!(rec["origin_action_value"], "15");
        assert_eq!(
            (rec["type"].clone(), rec["value"].clone()),
            (json!("percentage"), json!(-15.0))
        );
        assert_eq!(
            rec["conditions"],
            json!({"brand": "Acme", "price_above": "5.00"})
        );
        assert_eq!(rec["condition_id"], "all");
        assert_eq!(
            names(create(
                json!({"origin_price_list_id": 1, "target_price_list_id": 2,
            "type": "fixed", "value": 1, "origin_action_id": "set_fixed"})
            )),
            ["type"]
        );
        assert_eq!(
            names(create(
                json!({"origin_price_list_id": 1, "target_price_list_id": 2, "type": "fixed"})
            )),
            ["value"]
        );
    }

    #[test]
    fn an_edit_keeps_what_it_does_not_name() {
        let Ok((current, _)) = create(json!({"origin_price_list_id": 1, "target_price_list_id": 2,
            "origin_action_id": "increase_percent", "origin_action_value": "10", "condition_id": "brand",
            "condition_value": "Acme", "name": "A"}))
        else {
            panic!("valid rule refused")
        };
        let edit = |body| {
            RuleRequest::from_json(&body)
                .and_then(|r| r.edit(&current))
                .map(|(f, _)| f)
        };
        let f = edit(json!({"origin_action_value": "20", "name": ""}))
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            (f.action.value_string(), f.name, f.condition.value_string()),
            ("20".into(), None, "Acme".into())
        );
        let f = edit(json!({"value": -5})).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(f.action.kind(), ActionKind::DecreasePercent);
        let f = edit(json!({"condition_id": "all"})).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(f.condition, Condition::All);
        let e = edit(json!({"origin_action_id": "set_fixed"}))
            .err()
            .unwrap_or_default();
        assert_eq!(e[0].name, "origin_action_value");
    }

    #[test]
    fn channels_limit_the_items() {
        let Ok((f, _)) = create(json!({"origin_price_list_id": 1, "target_price_list_id": 2,
            "origin_action_id": "set_fixed", "origin_action_value": "1", "channels": ["amazon", "ebay"]}))
        else {
            panic!()
        };
        let facts = |channels: &[String]| {
            f.applies_to(&ItemFacts {
                sku: "A",
                brand: None,
                category: None,
                channels,
                price: crate::Money(100),
            })
        };
        assert!(facts(&["EBAY".into()]));
        assert!(!facts(&["shop".into()]));
        assert!(!facts(&[]));
    }

    #[test]
    fn placing_inserts_moves_and_refuses_out_of_range() {
        let mut order = vec![10, 20, 30];
        assert_eq!(place(&mut order, 30, 1), Ok(()));
        assert_eq!(order, [30, 10, 20]);
        assert_eq!(moved(&[10, 20, 30], &order), [(30, 1), (10, 2), (20, 3)]);
        assert_eq!(place(&mut order, 40, 4), Ok(()));
        assert!(place(&mut order, 40, 5).is_err());
        assert!(place(&mut order, 50, 6).is_err());
        assert!(place(&mut order, 10, 0).is_err());
        assert_eq!(order, [30, 10, 20, 40]);
        assert_eq!(moved(&order.clone(), &order), []);
    }

    proptest! {
        /// Any sequence of moves and inserts keeps the order a permutation
        /// of the rules placed, each at the place asked for.
        #[test]
        fn positions_stay_a_permutation(n in 0usize..20, moves in prop::collection::vec((0i64..25, 1i64..25), 0..40)) {
            let mut order: Vec<i64> = (0..n as i64).collect();
            for (id, pos) in moves {
                let before = order.clone();
                match place(&mut order, id, pos) {
                    Ok(()) => {
                        prop_assert_eq!(order[(pos - 1) as usize], id);
                        let mut expected = before.clone();
                        if !expected.contains(&id) {
                            expected.push(id);
                        }
                        expected.sort_unstable();
                        let mut got = order.clone();
                        got.sort_unstable();
                        prop_assert_eq!(got, expected);
                        for (moved_id, p) in moved(&before, &order) {
                            prop_assert_eq!(order[(p - 1) as usize], moved_id);
                            prop_assert!(before.get((p - 1) as usize) != Some(&moved_id));
                        }
                    }
                    Err(_) => prop_assert_eq!(&order, &before),
                }
            }
        }
    }
}
