//! Pricing jobs: rules applied to the business's item prices, in one
//! transaction, once per job key.
//!
//! Rules run in position order and each reads the prices the rules before it
//! left, so a rule may build on another's target list. A price written is
//! the origin price changed by the action, rounded half away from zero, in
//! the origin price's currency; every change is audited and each changed
//! item is logged once as `item.updated`, as an edit would be, so that the
//! edges receive the new prices.

use crate::Office;
use crate::store::pricing as sql;
use depot_protocol::event::EventKind;
use depot_protocol::pricing::{ItemFacts, JobSpec, PriceChange, PricingRule, RuleRun, RuleStatus};
use depot_protocol::{BusinessId, ItemId, Timestamp, now};
use depot_sql::Db;
use depot_wms::sql::{append_event, item as catalog_item};
use depot_wms::{Result, WmsError};
use std::collections::BTreeSet;

/// What a job did, or did the first time its key was used.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOutcome {
    pub job_id: String,
    pub runs: Vec<RuleRun>,
    /// The key had been used: nothing was done now.
    pub replayed: bool,
}

/// The rules a job applies: the one it names (whatever its status), or
/// every active rule, narrowed to the price lists it names.
fn selected(conn: &Db, business: BusinessId, spec: &JobSpec) -> Result<Vec<PricingRule>> {
    let mut rules = match spec.rule_id {
        Some(id) => vec![
            sql::rule(conn, business, id)?
                .ok_or_else(|| WmsError::NotFound(format!("pricing rule {id} does not exist")))?,
        ],
        None => sql::rules(conn, business)?
            .into_iter()
            .filter(|r| r.fields.status == RuleStatus::Active)
            .collect(),
    };
    rules.retain(|r| {
        spec.origin.is_none_or(|o| r.fields.origin == o)
            && spec.target.is_none_or(|t| r.fields.target == t)
    });
    Ok(rules)
}

struct Job<'a> {
    conn: &'a Db,
    business: BusinessId,
    id: &'a str,
    at: Timestamp,
    touched: BTreeSet<ItemId>,
}

impl Job<'_> {
    fn apply(&mut self, rule: &PricingRule) -> Result<RuleRun> {
        let f = &rule.fields;
        let mut run = RuleRun {
            rule: rule.record(),
            job_id: self.id.to_owned(),
            items_matched: 0,
            items_changed: 0,
            items_skipped: 0,
        };
        for c in sql::candidates(self.conn, self.business, f.origin, f.target)? {
            let (price, currency) = &c.origin;
            let facts = ItemFacts {
                sku: &c.sku,
                brand: c.brand.as_deref(),
                category: c.category.as_deref(),
                channels: &c.channels,
                price: *price,
            };
            if !f.applies_to(&facts) {
                continue;
            }
            run.items_matched += 1;
            let Some(new) = f.action.apply(*price) else {
                run.items_skipped += 1;
                continue;
            };
            let old = match &c.target {
                // A price list is in one currency: converting is not a rule's job.
                Some((_, cur)) if cur != currency => {
                    run.items_skipped += 1;
                    continue;
                }
                Some((old, _)) if *old == new => continue,
                t => t.as_ref().map(|t| t.0),
            };
            sql::set_price(self.conn, c.item, f.target, new, currency, &self.at)?;
            sql::record_change(
                self.conn,
                self.business,
                &PriceChange {
                    job_id: self.id.to_owned(),
                    rule_id: rule.id,
                    item_id: c.item,
                    price_list_id: f.target,
                    old_amount: old,
                    new_amount: new,
                    currency: currency.clone(),
                    at: self.at,
                },
            )?;
            self.touched.insert(c.item);
            run.items_changed += 1;
        }
        Ok(run)
    }
}

fn execute(conn: &Db, origin: &str, business: BusinessId, spec: JobSpec) -> Result<JobOutcome> {
    let job_id = spec
        .job_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let request = spec.fingerprint();
    if let Some((first, result)) = sql::job(conn, business, &job_id)? {
        if first != request {
            return Err(WmsError::field_conflict(
                "job_id",
                format!("job {job_id} was run with another body"),
            ));
        }
        return Ok(JobOutcome {
            job_id,
            runs: serde_json::from_str(&result)?,
            replayed: true,
        });
    }
    let mut job = Job {
        conn,
        business,
        id: &job_id,
        at: now(),
        touched: BTreeSet::new(),
    };
    let runs = selected(conn, business, &spec)?
        .iter()
        .map(|rule| job.apply(rule))
        .collect::<Result<Vec<_>>>()?;
    for id in &job.touched {
        let item = catalog_item(conn, business, *id)?
            .ok_or_else(|| WmsError::Internal(format!("item {id} vanished")))?;
        append_event(conn, origin, Some(business), EventKind::ItemUpdated, &item)?;
    }
    let summary: Vec<_> = runs
        .iter()
        .map(|r| {
            serde_json::json!({"rule_id": r.rule.id, "items_matched": r.items_matched,
                "items_changed": r.items_changed, "items_skipped": r.items_skipped})
        })
        .collect();
    append_event(
        conn,
        origin,
        Some(business),
        EventKind::PricingJobExecuted,
        &serde_json::json!({"job_id": job_id, "rules": summary}),
    )?;
    sql::insert_job(
        conn,
        business,
        &job_id,
        &request,
        &serde_json::to_string(&runs)?,
        &job.at,
    )?;
    Ok(JobOutcome {
        job_id,
        runs,
        replayed: false,
    })
}

impl Office {
    /// Runs a pricing job, all of it or nothing; a key already used answers
    /// what its job answered (409 if the body differs).
    pub async fn execute_pricing_job(
        &self,
        business: BusinessId,
        spec: JobSpec,
    ) -> Result<JobOutcome> {
        let origin = self.origin().to_owned();
        self.write(move |conn| execute(conn, &origin, business, spec))
            .await
    }

    /// The prices a job changed (the audit), in the order it changed them;
    /// 404 when the business ran no job by that key.
    pub async fn pricing_changes(
        &self,
        business: BusinessId,
        job_id: String,
    ) -> Result<Vec<PriceChange>> {
        self.read(move |conn| {
            if sql::job(conn, business, &job_id)?.is_none() {
                return Err(WmsError::NotFound(format!("no pricing job {job_id:?}")));
            }
            sql::changes(conn, business, &job_id)
        })
        .await
    }
}
