//! Pricing rules, the jobs run and the prices they changed.

use depot_protocol::pricing::{PriceChange, PricingRule, RuleFields, RuleInput, RuleRequest};
use depot_protocol::{BusinessId, ItemId, Money, PriceListId, Timestamp};
use depot_sql::{Db, Row, params};
use depot_wms::sql::{maybe, parse_json, parse_ts, ts};
use depot_wms::{Result, WmsError};
use std::collections::BTreeMap;

const COLS: &str = "id, position, name, origin_price_list_id, target_price_list_id, action_id, action_value,
                    condition_id, condition_value, conditions, channels, status, created_at, updated_at";

/// A stored rule is read back through the checks it passed when written.
fn rule_row(r: &Row) -> depot_sql::Result<std::result::Result<PricingRule, String>> {
    let id: i64 = r.get(0)?;
    let conditions: serde_json::Map<String, serde_json::Value> = parse_json(&r.get::<String>(9)?)?;
    let input = RuleInput {
        name: r.get(2)?,
        origin_price_list_id: r.get(3)?,
        target_price_list_id: r.get(4)?,
        origin_action_id: r.get(5)?,
        origin_action_value: r.get(6)?,
        condition_id: r.get(7)?,
        condition_value: r.get(8)?,
        conditions: Some(conditions),
        channels: Some(parse_json(&r.get::<String>(10)?)?),
        status: r.get(11)?,
        ..RuleInput::default()
    };
    let created_at = parse_ts(&r.get::<String>(12)?)?;
    let updated_at = parse_ts(&r.get::<String>(13)?)?;
    let position = r.get(1)?;
    Ok(match RuleRequest::new(input).create() {
        Ok((fields, _)) => Ok(PricingRule {
            id,
            position,
            fields,
            created_at,
            updated_at,
        }),
        Err(e) => Err(format!("stored pricing rule {id} no longer checks: {e:?}")),
    })
}

fn rules_where(
    conn: &Db,
    clause: &str,
    args: &[&dyn depot_sql::ToSql],
) -> Result<Vec<PricingRule>> {
    let stmt = &format!("SELECT {COLS} FROM pricing_rules WHERE {clause} ORDER BY position");
    let rows = conn.query_map(stmt, args, rule_row)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(row.map_err(WmsError::Internal)?);
    }
    Ok(out)
}

/// A business's rules, first applied first.
pub fn rules(conn: &Db, business: BusinessId) -> Result<Vec<PricingRule>> {
    rules_where(conn, "business_id = ?1", params![business.0])
}

pub fn rule(conn: &Db, business: BusinessId, id: i64) -> Result<Option<PricingRule>> {
    Ok(rules_where(
        conn,
        "business_id = ?1 AND id = ?2",
        params![business.0, id],
    )?
    .into_iter()
    .next())
}

/// The business's rule ids by position.
pub fn order(conn: &Db, business: BusinessId) -> Result<Vec<i64>> {
    let stmt = "SELECT id FROM pricing_rules WHERE business_id = ?1 ORDER BY position";
    let rows = conn.query_map(stmt, params![business.0], |r| r.get(0))?;
    Ok(rows)
}

/// Gives rules new positions. Each first takes its position negated, so no
/// two rules hold one position at any step (positions are unique).
pub fn set_positions(conn: &Db, business: BusinessId, moves: &[(i64, i64)]) -> Result<()> {
    let stmt = "UPDATE pricing_rules SET position = ?3 WHERE business_id = ?1 AND id = ?2";
    for (id, position) in moves {
        conn.execute(stmt, params![business.0, id, -position])?;
    }
    conn.execute(
        "UPDATE pricing_rules SET position = -position WHERE business_id = ?1 AND position < 0",
        params![business.0],
    )?;
    Ok(())
}

fn json_columns(f: &RuleFields) -> Result<(String, String)> {
    let conditions: BTreeMap<&str, String> = f
        .conditions
        .iter()
        .map(|c| (c.id(), c.value_string()))
        .collect();
    Ok((
        serde_json::to_string(&conditions)?,
        serde_json::to_string(&f.channels)?,
    ))
}

pub fn insert(
    conn: &Db,
    business: BusinessId,
    f: &RuleFields,
    position: i64,
    at: &Timestamp,
) -> Result<i64> {
    let (conditions, channels) = json_columns(f)?;
    let inserted: i64 = conn.query_value("INSERT INTO pricing_rules (business_id, position, name, origin_price_list_id, target_price_list_id,
             action_id, action_value, condition_id, condition_value, conditions, channels, status, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13) RETURNING id", params![
        business.0,
        position,
        f.name,
        f.origin.0,
        f.target.0,
        f.action.kind().as_str(),
        f.action.value_string(),
        f.condition.id(),
        f.condition.value_string(),
        conditions,
        channels,
        f.status.as_i64(),
        ts(at),
    ])?;
    Ok(inserted)
}

pub fn update(
    conn: &Db,
    business: BusinessId,
    id: i64,
    f: &RuleFields,
    at: &Timestamp,
) -> Result<()> {
    let (conditions, channels) = json_columns(f)?;
    conn.execute("UPDATE pricing_rules SET name = ?3, origin_price_list_id = ?4, target_price_list_id = ?5, action_id = ?6,
             action_value = ?7, condition_id = ?8, condition_value = ?9, conditions = ?10, channels = ?11,
             status = ?12, updated_at = ?13
         WHERE business_id = ?1 AND id = ?2", params![
        business.0,
        id,
        f.name,
        f.origin.0,
        f.target.0,
        f.action.kind().as_str(),
        f.action.value_string(),
        f.condition.id(),
        f.condition.value_string(),
        conditions,
        channels,
        f.status.as_i64(),
        ts(at),
    ])?;
    Ok(())
}

pub fn delete(conn: &Db, business: BusinessId, id: i64) -> Result<()> {
    conn.execute(
        "DELETE FROM pricing_rules WHERE business_id = ?1 AND id = ?2",
        params![business.0, id],
    )?;
    Ok(())
}

/// A job already run under `job_id`: its request fingerprint and answer.
pub fn job(conn: &Db, business: BusinessId, job_id: &str) -> Result<Option<(String, String)>> {
    maybe(conn.query_row(
        "SELECT request, result FROM pricing_jobs WHERE business_id = ?1 AND job_id = ?2",
        params![business.0, job_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    ))
}

pub fn insert_job(
    conn: &Db,
    business: BusinessId,
    job_id: &str,
    request: &str,
    result: &str,
    at: &Timestamp,
) -> Result<()> {
    conn.execute("INSERT INTO pricing_jobs (business_id, job_id, request, result, executed_at) VALUES (?1, ?2, ?3, ?4, ?5)", params![business.0, job_id, request, result, ts(at)])?;
    Ok(())
}

/// An item a rule may change: what its conditions look at, its origin
/// price, and its target price if it has one.
pub struct Candidate {
    pub item: ItemId,
    pub sku: String,
    pub brand: Option<String>,
    pub category: Option<String>,
    pub channels: Vec<String>,
    pub origin: (Money, String),
    pub target: Option<(Money, String)>,
}

/// The business's items with a price in `origin`, by id.
pub fn candidates(
    conn: &Db,
    business: BusinessId,
    origin: PriceListId,
    target: PriceListId,
) -> Result<Vec<Candidate>> {
    // One row per item and channel it links to (or one with none): the
    // channels are gathered here, as both databases can.
    let stmt = "SELECT i.id, i.sku, i.brand, i.category, o.amount_cents, o.currency, t.amount_cents, t.currency,
                l.channel
         FROM items i
         JOIN item_prices o ON o.item_id = i.id AND o.price_list_id = ?2
         LEFT JOIN item_prices t ON t.item_id = i.id AND t.price_list_id = ?3
         LEFT JOIN item_links l ON l.item_id = i.id
         WHERE i.business_id = ?1
         ORDER BY i.id, l.position";
    let mut out: Vec<Candidate> = Vec::new();
    conn.query_each(stmt, params![business.0, origin.0, target.0], |r| {
        let item = ItemId(r.get(0)?);
        let channel: Option<String> = r.get(8)?;
        if let Some(last) = out.last_mut().filter(|c| c.item == item) {
            last.channels.extend(channel);
            return Ok(());
        }
        let target = match (r.get::<Option<i64>>(6)?, r.get::<Option<String>>(7)?) {
            (Some(cents), Some(currency)) => Some((Money(cents), currency)),
            _ => None,
        };
        out.push(Candidate {
            item,
            sku: r.get(1)?,
            brand: r.get(2)?,
            category: r.get(3)?,
            channels: channel.into_iter().collect(),
            origin: (Money(r.get(4)?), r.get(5)?),
            target,
        });
        Ok(())
    })?;
    Ok(out)
}

/// Writes an item's price in a list, and dates the item's change.
pub fn set_price(
    conn: &Db,
    item: ItemId,
    list: PriceListId,
    amount: Money,
    currency: &str,
    at: &Timestamp,
) -> Result<()> {
    conn.execute("INSERT INTO item_prices (item_id, price_list_id, amount_cents, currency) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (item_id, price_list_id) DO UPDATE SET amount_cents = excluded.amount_cents,
             currency = excluded.currency", params![item.0, list.0, amount.cents(), currency])?;
    conn.execute(
        "UPDATE items SET updated_at = ?2 WHERE id = ?1",
        params![item.0, ts(at)],
    )?;
    Ok(())
}

pub fn record_change(conn: &Db, business: BusinessId, c: &PriceChange) -> Result<()> {
    conn.execute("INSERT INTO pricing_changes (business_id, job_id, rule_id, item_id, price_list_id, old_amount_cents,
             new_amount_cents, currency, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", params![
        business.0,
        c.job_id,
        c.rule_id,
        c.item_id.0,
        c.price_list_id.0,
        c.old_amount.map(Money::cents),
        c.new_amount.cents(),
        c.currency,
        ts(&c.at),
    ])?;
    Ok(())
}

/// The prices a job changed, in the order it changed them.
pub fn changes(conn: &Db, business: BusinessId, job_id: &str) -> Result<Vec<PriceChange>> {
    let stmt = "SELECT job_id, rule_id, item_id, price_list_id, old_amount_cents, new_amount_cents, currency, at
         FROM pricing_changes WHERE business_id = ?1 AND job_id = ?2 ORDER BY id";
    let rows = conn.query_map(stmt, params![business.0, job_id], |r| {
        Ok(PriceChange {
            job_id: r.get(0)?,
            rule_id: r.get(1)?,
            item_id: ItemId(r.get(2)?),
            price_list_id: PriceListId(r.get(3)?),
            old_amount: r.get::<Option<i64>>(4)?.map(Money),
            new_amount: Money(r.get(5)?),
            currency: r.get(6)?,
            at: parse_ts(&r.get::<String>(7)?)?,
        })
    })?;
    Ok(rows)
}
