//! The bodies of `position` and `jobs/execute`, and what they answer.

use super::fields::Fields;
use super::{MAX_RULES, RuleRecord};
use crate::{FieldError, ItemId, Money, PriceListId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest job key.
pub const MAX_JOB_ID: usize = 100;

/// Position-change answer item: a rule and its new position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RulePosition {
    pub id: String,
    pub position_id: i64,
}

/// One move of a `position` body.
#[derive(Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct MoveEntry {
    /// The rule (an integer, or the string id answers carry).
    #[schema(minimum = 1)]
    pub id: i64,
    /// Where it goes, 1 first, at most the number of rules.
    #[schema(minimum = 1, maximum = 500)]
    pub position_id: i64,
}

/// Body of `position`: `{"id": 12, "position_id": 3}` moves one rule;
/// `{"positions": [{"id": 12, "position_id": 1}, ...]}` makes several moves
/// in order (at most 500), all or none. The spec's `error` property is not
/// read: an unknown field is a field error.
#[derive(Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct MoveRequest {
    #[schema(minimum = 1)]
    pub id: Option<i64>,
    #[schema(minimum = 1, maximum = 500)]
    pub position_id: Option<i64>,
    pub positions: Option<Vec<MoveEntry>>,
}

/// A checked move; `field` names it in errors (`""` or `positions[2].`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleMove {
    pub id: i64,
    pub position: i64,
    pub field: String,
}

fn one_move(f: &mut Fields, prefix: &str) -> Option<RuleMove> {
    let id = f.id("id");
    let position = f.int("position_id");
    if !f.has("id") {
        f.fail("id", "is required");
    }
    if !f.has("position_id") {
        f.fail("position_id", "is required");
    }
    Some(RuleMove {
        id: id?,
        position: position?,
        field: prefix.to_owned(),
    })
}

impl MoveRequest {
    pub fn parse(body: &Value) -> Result<Vec<RuleMove>, Vec<FieldError>> {
        let known = ["id", "position_id", "positions"];
        let mut f = Fields::new(body, &known, "a position change", "")?;
        if !f.has("positions") {
            let one = one_move(&mut f, "");
            let errors = f.into_errors();
            return match one {
                Some(m) if errors.is_empty() => Ok(vec![m]),
                _ => Err(errors),
            };
        }
        if f.has("id") || f.has("position_id") {
            f.fail(
                "positions",
                "give id and position_id, or positions, not both",
            );
        }
        let list = f.array("positions");
        if list.is_some_and(|l| !(1..=MAX_RULES).contains(&l.len())) {
            f.fail("positions", format!("must have 1 to {MAX_RULES} entries"));
        }
        let mut moves = Vec::new();
        let mut errors = f.into_errors();
        for (i, entry) in list.into_iter().flatten().enumerate() {
            let prefix = format!("positions[{i}]");
            match Fields::new(entry, &["id", "position_id"], "a move", &prefix) {
                Ok(mut g) => {
                    moves.extend(one_move(&mut g, &format!("{prefix}.")));
                    errors.extend(g.into_errors());
                }
                Err(e) => errors.extend(e),
            }
        }
        if errors.is_empty() {
            Ok(moves)
        } else {
            Err(errors)
        }
    }
}

/// Body of `jobs/execute`: which rules to apply now, and the job's key.
#[derive(Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct JobRequest {
    /// The job's key (1 to 100 of `A-Z a-z 0-9 - _ . : ~`), or the
    /// `Idempotency-Key` header (both: the same). A job already run with
    /// this key is not run again: its first answer is repeated. Without a
    /// key every call is a new job, whose key the answer carries.
    pub job_id: Option<String>,
    /// Apply only this rule, active or not (`id` is the same). Without it,
    /// every active rule is applied, in position order.
    #[schema(minimum = 1)]
    pub rule_id: Option<i64>,
    /// Apply only the rules reading this price list.
    #[schema(minimum = 1)]
    pub origin_price_list_id: Option<i64>,
    /// Apply only the rules writing this price list.
    #[schema(minimum = 1)]
    pub target_price_list_id: Option<i64>,
}

/// A checked job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobSpec {
    #[serde(skip)]
    pub job_id: Option<String>,
    pub rule_id: Option<i64>,
    pub origin: Option<PriceListId>,
    pub target: Option<PriceListId>,
}

fn valid_key(k: &str) -> bool {
    (1..=MAX_JOB_ID).contains(&k.len())
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:~".contains(&b))
}

impl JobSpec {
    /// `header` is the `Idempotency-Key` header, if the request had one.
    pub fn parse(body: &Value, header: Option<&str>) -> Result<Self, Vec<FieldError>> {
        let known = [
            "job_id",
            "rule_id",
            "id",
            "origin_price_list_id",
            "target_price_list_id",
        ];
        let mut f = Fields::new(body, &known, "a pricing job", "")?;
        let job_id = f.string("job_id");
        let rule_id = f.id("rule_id");
        let id = f.id("id");
        let mut list = |name: &str| {
            let v = f.int(name);
            if v.is_some_and(|v| v <= 0) {
                f.fail(name, "must be greater than 0");
            }
            v.map(PriceListId)
        };
        let origin = list("origin_price_list_id");
        let target = list("target_price_list_id");
        if header.is_some_and(|h| !valid_key(h)) {
            f.fail(
                "Idempotency-Key",
                format!("must be 1 to {MAX_JOB_ID} of A-Z a-z 0-9 - _ . : ~"),
            );
        }
        if job_id.as_deref().is_some_and(|k| !valid_key(k)) {
            f.fail(
                "job_id",
                format!("must be 1 to {MAX_JOB_ID} of A-Z a-z 0-9 - _ . : ~"),
            );
        }
        if let (Some(h), Some(k)) = (header, job_id.as_deref()) {
            if h != k {
                f.fail("job_id", "is not the Idempotency-Key header's key");
            }
        }
        if let (Some(a), Some(b)) = (rule_id, id) {
            if a != b {
                f.fail("id", "names another rule than rule_id");
            }
        }
        for (name, v) in [("rule_id", rule_id), ("id", id)] {
            if v.is_some_and(|v| v <= 0) {
                f.fail(name, "must be greater than 0");
            }
        }
        let errors = f.into_errors();
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            job_id: job_id.or(header.map(str::to_owned)),
            rule_id: rule_id.or(id),
            origin,
            target,
        })
    }

    /// What a job is, apart from its key: a key used again with another
    /// spec is a conflict, not a replay.
    pub fn fingerprint(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// `jobs/execute` answer item: the rule as it was applied, and what it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RuleRun {
    #[serde(flatten)]
    pub rule: RuleRecord,
    pub job_id: String,
    /// Items the rule's conditions selected that have a price in the
    /// origin list.
    pub items_matched: u64,
    /// Of those, the items whose target price it changed.
    pub items_changed: u64,
    /// Of those, the items left alone: a result below zero or beyond any
    /// amount, or a target price in another currency than the origin's.
    pub items_skipped: u64,
}

/// One price a job changed: the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PriceChange {
    pub job_id: String,
    pub rule_id: i64,
    pub item_id: ItemId,
    pub price_list_id: PriceListId,
    /// None when the item had no price in that list.
    pub old_amount: Option<Money>,
    pub new_amount: Money,
    pub currency: String,
    pub at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(r: Result<impl Sized, Vec<FieldError>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn moves_come_alone_or_as_a_list() {
        let one = MoveRequest::parse(&json!({"id": "12", "position_id": 3}));
        assert_eq!(
            one,
            Ok(vec![RuleMove {
                id: 12,
                position: 3,
                field: String::new()
            }])
        );
        let many = MoveRequest::parse(
            &json!({"positions": [{"id": 1, "position_id": 2}, {"id": 2, "position_id": 1}]}),
        );
        assert_eq!(many.map(|m| m.len()), Ok(2));
        assert_eq!(
            names(MoveRequest::parse(&json!({"id": 1}))),
            ["position_id"]
        );
        assert_eq!(
            names(MoveRequest::parse(&json!({"id": 1, "position_id": "2"}))),
            ["position_id"]
        );
        assert_eq!(
            names(MoveRequest::parse(&json!({"error": 0}))),
            ["error", "id", "position_id"]
        );
        assert_eq!(
            names(MoveRequest::parse(
                &json!({"id": 1, "positions": [{"id": 1}, 5, {"id": 2, "position_id": 1, "x": 1}]})
            )),
            [
                "positions",
                "positions[0].position_id",
                "positions[1]",
                "positions[2].x"
            ]
        );
        assert_eq!(
            names(MoveRequest::parse(&json!({"positions": []}))),
            ["positions"]
        );
    }

    #[test]
    fn a_job_takes_its_key_from_the_body_or_the_header() {
        let j = JobSpec::parse(&json!({"job_id": "run-1", "id": 4}), None);
        assert_eq!(
            j.map(|j| (j.job_id, j.rule_id)),
            Ok((Some("run-1".into()), Some(4)))
        );
        let j = JobSpec::parse(&json!({}), Some("k-1"));
        assert_eq!(j.map(|j| j.job_id), Ok(Some("k-1".into())));
        assert_eq!(
            names(JobSpec::parse(&json!({"job_id": "a"}), Some("b"))),
            ["job_id"]
        );
        assert_eq!(
            names(JobSpec::parse(&json!({"job_id": "has space"}), None)),
            ["job_id"]
        );
        assert_eq!(
            names(JobSpec::parse(&json!({}), Some("é"))),
            ["Idempotency-Key"]
        );
        assert_eq!(
            names(JobSpec::parse(
                &json!({"rule_id": 1, "id": 2, "target_price_list_id": 0, "status": 1}),
                None
            )),
            ["status", "target_price_list_id", "id"]
        );
    }

    #[test]
    fn the_fingerprint_ignores_the_key() {
        let a =
            JobSpec::parse(&json!({"job_id": "a", "rule_id": 1}), None).map(|j| j.fingerprint());
        let b = JobSpec::parse(&json!({"rule_id": "1"}), Some("b")).map(|j| j.fingerprint());
        let c = JobSpec::parse(&json!({"rule_id": 2}), None).map(|j| j.fingerprint());
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
