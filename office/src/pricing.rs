//! Pricing rules (automation), made and run in the cloud: a business's rules
//! in their order, and jobs that apply them to item prices (`job`).
//!
//! Positions stay 1..n: every insert, move and delete computes the new order
//! and rewrites the positions that changed, in the writer's transaction, so
//! two moves at once are applied one after the other on what the first left.

mod job;

pub use job::JobOutcome;

use crate::Office;
use crate::store::pricing as sql;
use depot_protocol::event::EventKind;
use depot_protocol::pricing::{
    MAX_RULES, PricingRule, RuleMove, RulePosition, RuleRequest, moved, place,
};
use depot_protocol::{BusinessId, FieldError, now};
use depot_sql::Db;
use depot_wms::sql::append_event;
use depot_wms::{Result, WmsError};
use serde_json::json;

fn load(conn: &Db, business: BusinessId, id: i64) -> Result<PricingRule> {
    sql::rule(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("pricing rule {id} does not exist")))
}

/// Applies moves in order to the business's rules and writes the positions
/// that changed, answered as (id, new position).
fn reposition(conn: &Db, business: BusinessId, moves: &[RuleMove]) -> Result<Vec<(i64, i64)>> {
    let before = sql::order(conn, business)?;
    let mut order = before.clone();
    let mut errors = Vec::new();
    for m in moves {
        if !order.contains(&m.id) {
            return Err(WmsError::NotFound(format!(
                "pricing rule {} does not exist",
                m.id
            )));
        }
        if let Err(e) = place(&mut order, m.id, m.position) {
            errors.push(FieldError::new(format!("{}position_id", m.field), e));
        }
    }
    if !errors.is_empty() {
        return Err(WmsError::invalid(errors));
    }
    let changed = moved(&before, &order);
    sql::set_positions(conn, business, &changed)?;
    Ok(changed)
}

fn changed_event(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    payload: serde_json::Value,
) -> Result<()> {
    append_event(
        conn,
        origin,
        Some(business),
        EventKind::PricingRulesChanged,
        &payload,
    )?;
    Ok(())
}

impl Office {
    /// The business's rules, in the order a job applies them.
    pub async fn pricing_rules(&self, business: BusinessId) -> Result<Vec<PricingRule>> {
        self.read(move |conn| sql::rules(conn, business)).await
    }

    /// Creates a rule at the position asked for (default: last).
    pub async fn create_pricing_rule(
        &self,
        business: BusinessId,
        req: RuleRequest,
    ) -> Result<PricingRule> {
        let (fields, position) = req.create().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let before = sql::order(conn, business)?;
            if before.len() >= MAX_RULES {
                return Err(WmsError::conflict(format!(
                    "a business has at most {MAX_RULES} pricing rules"
                )));
            }
            // Ids start at 1: 0 holds the new rule's place until it has one.
            let mut order = before.clone();
            let position = position.unwrap_or(before.len() as i64 + 1);
            place(&mut order, 0, position)
                .map_err(|e| WmsError::invalid(vec![FieldError::new("position_id", e)]))?;
            let shifted: Vec<_> = moved(&before, &order)
                .into_iter()
                .filter(|(id, _)| *id != 0)
                .collect();
            sql::set_positions(conn, business, &shifted)?;
            let id = sql::insert(conn, business, &fields, position, &now())?;
            let rule = load(conn, business, id)?;
            changed_event(
                conn,
                &origin,
                business,
                json!({"change": "created", "rule": rule.record()}),
            )?;
            Ok(rule)
        })
        .await
    }

    /// Changes the fields given; a `position_id` moves the rule.
    pub async fn edit_pricing_rule(
        &self,
        business: BusinessId,
        id: i64,
        req: RuleRequest,
    ) -> Result<PricingRule> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let current = load(conn, business, id)?;
            let (fields, position) = req.edit(&current.fields).map_err(WmsError::invalid)?;
            if let Some(position) = position {
                let m = RuleMove {
                    id,
                    position,
                    field: String::new(),
                };
                reposition(conn, business, &[m])?;
            }
            sql::update(conn, business, id, &fields, &now())?;
            let rule = load(conn, business, id)?;
            changed_event(
                conn,
                &origin,
                business,
                json!({"change": "edited", "rule": rule.record()}),
            )?;
            Ok(rule)
        })
        .await
    }

    /// Deletes a rule; those after it move up. Answers the rule as it was.
    pub async fn delete_pricing_rule(&self, business: BusinessId, id: i64) -> Result<PricingRule> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let rule = load(conn, business, id)?;
            let before = sql::order(conn, business)?;
            let after: Vec<i64> = before.iter().copied().filter(|r| *r != id).collect();
            sql::delete(conn, business, id)?;
            sql::set_positions(conn, business, &moved(&before, &after))?;
            changed_event(
                conn,
                &origin,
                business,
                json!({"change": "deleted", "rule": rule.record()}),
            )?;
            Ok(rule)
        })
        .await
    }

    /// Moves rules, in order, all or none; answers the rules whose
    /// position changed, in position order.
    pub async fn move_pricing_rules(
        &self,
        business: BusinessId,
        moves: Vec<RuleMove>,
    ) -> Result<Vec<RulePosition>> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let changed: Vec<RulePosition> = reposition(conn, business, &moves)?
                .into_iter()
                .map(|(id, position_id)| RulePosition {
                    id: id.to_string(),
                    position_id,
                })
                .collect();
            if !changed.is_empty() {
                changed_event(
                    conn,
                    &origin,
                    business,
                    json!({"change": "moved", "positions": changed}),
                )?;
            }
            Ok(changed)
        })
        .await
    }
}
