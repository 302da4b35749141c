//! Trust at the boundary: before a node applies an event another node
//! sent, every record the event names must belong to the sender's business
//! (and, from an edge, to a warehouse it serves), and a record it makes
//! must not take an id that is another's. What each kind names is the event
//! catalogue's (`depot_protocol::catalogue::refs`); this module only looks
//! the records up.
//!
//! A refused event is never applied: the caller records it as a conflict of
//! the sender's business. The reason says which reference failed without
//! saying whose the record is: another tenant's ids are not confirmed to
//! exist.

use crate::Result;
use crate::store::ids::NODE_SHIFT;
use crate::store::owners::{self, Owner};
use depot_protocol::catalogue::refs::{self, Entity, Role};
use depot_protocol::event::RemoteEvent;
use depot_protocol::{BusinessId, WarehouseId, catalogue};
use std::collections::{HashMap, HashSet};

/// Who sent the events being checked.
#[derive(Debug, Clone)]
pub struct Sender {
    /// The business they must stay within.
    pub business: BusinessId,
    /// An edge: its name for messages, the node whose id range its new
    /// records must use, and the warehouses it serves (`None`: all).
    pub edge: Option<EdgeScope>,
}

#[derive(Debug, Clone)]
pub struct EdgeScope {
    pub edge_id: String,
    pub node: u32,
    pub warehouses: Option<Vec<WarehouseId>>,
}

impl Sender {
    /// The cloud, sending an edge of `business` its pages.
    pub fn cloud(business: BusinessId) -> Self {
        Self {
            business,
            edge: None,
        }
    }

    /// An edge of `business`, numbered `node`, serving `warehouses` (empty:
    /// all of its business's).
    pub fn edge(
        business: BusinessId,
        edge_id: &str,
        node: u32,
        warehouses: Vec<WarehouseId>,
    ) -> Self {
        Self {
            business,
            edge: Some(EdgeScope {
                edge_id: edge_id.to_owned(),
                node,
                warehouses: (!warehouses.is_empty()).then_some(warehouses),
            }),
        }
    }

    fn serves(&self, w: WarehouseId) -> bool {
        self.edge
            .as_ref()
            .and_then(|e| e.warehouses.as_ref())
            .is_none_or(|ws| ws.contains(&w))
    }
}

/// The checks of one pass over a batch: owners already found are kept (an
/// owner never changes, and a batch of movements names the same items and
/// warehouses again and again). Records not found are looked up again: an
/// earlier event of the batch may make them.
pub struct Checker<'a> {
    sender: &'a Sender,
    known: HashMap<(Entity, i64), Owner>,
}

impl<'a> Checker<'a> {
    pub fn new(sender: &'a Sender) -> Self {
        Self {
            sender,
            known: HashMap::new(),
        }
    }

    fn owner(&mut self, conn: &depot_sql::Db, entity: Entity, id: i64) -> Result<Option<Owner>> {
        if let Some(o) = self.known.get(&(entity, id)) {
            return Ok(Some(*o));
        }
        let found = owners::owner(conn, entity, id)?;
        if let Some(o) = found {
            self.known.insert((entity, id), o);
        }
        Ok(found)
    }

    /// Looks up together the owners of the records `events` name that are
    /// not known yet, so that [`Checker::refusal`] finds them known: on
    /// PostgreSQL one round trip for a run of events, where `refusal`
    /// would wait for each record in turn. What a payload does not say
    /// well, `refusal` finds and says.
    pub fn look_up(&mut self, conn: &depot_sql::Db, events: &[&RemoteEvent]) -> Result<()> {
        let mut wanted = HashSet::new();
        for e in events {
            let Some(entry) = catalogue::lookup(&e.kind) else {
                continue;
            };
            let Ok(payload) = serde_json::from_str::<serde_json::Value>(e.payload.get()) else {
                continue;
            };
            for r in entry.refs {
                for id in refs::ids(&payload, r.path).unwrap_or_default() {
                    if r.entity != Entity::Business && !self.known.contains_key(&(r.entity, id)) {
                        wanted.insert((r.entity, id));
                    }
                }
            }
        }
        let mut sent = Vec::with_capacity(wanted.len());
        for (entity, id) in wanted {
            if let Some(read) = owners::owner_later(conn, entity, id)? {
                sent.push((entity, id, read));
            }
        }
        for (entity, id, read) in sent {
            if let Some(o) = read.first(conn)? {
                self.known.insert((entity, id), o);
            }
        }
        Ok(())
    }

    /// Why the event must not be applied here, if it must not.
    pub fn refusal(&mut self, conn: &depot_sql::Db, e: &RemoteEvent) -> Result<Option<String>> {
        let business = self.sender.business;
        if e.business_id.is_some_and(|b| b != business) {
            return Ok(Some(format!(
                "the change is another business's than {business}"
            )));
        }
        let (kind, payload) = (e.kind.as_str(), e.payload.get());
        let Some(entry) = catalogue::lookup(kind) else {
            return Ok(Some(format!(
                "{kind} is not a kind of event this node knows"
            )));
        };
        let payload: serde_json::Value = match serde_json::from_str(payload) {
            Ok(v) => v,
            Err(e) => return Ok(Some(format!("malformed {kind} payload: {e}"))),
        };
        if !payload.is_object() {
            return Ok(Some(format!("the {kind} payload is not an object")));
        }
        match payload.get("business_id") {
            None | Some(serde_json::Value::Null) => {}
            Some(b) if b.as_i64() == Some(business.0) => {}
            Some(_) => {
                return Ok(Some(format!(
                    "the event names another business than {business}"
                )));
            }
        }
        for r in entry.refs {
            let ids = match refs::ids(&payload, r.path) {
                Ok(ids) => ids,
                Err(e) => return Ok(Some(e)),
            };
            for id in ids {
                if let Some(reason) = self.check(conn, r.entity, r.role, id)? {
                    return Ok(Some(reason));
                }
            }
        }
        if kind == "shipment.packed" {
            return self.ssccs(conn, &payload);
        }
        Ok(None)
    }

    /// The SSCCs of the parcels an edge packed must come from the blocks
    /// granted to that edge: any other would be another node's (or another
    /// company's) number.
    fn ssccs(&self, conn: &depot_sql::Db, payload: &serde_json::Value) -> Result<Option<String>> {
        let Some(edge) = &self.sender.edge else {
            return Ok(None);
        };
        let packages = payload.get("packages").and_then(|p| p.as_array());
        let mut ssccs = Vec::new();
        for (i, p) in packages.into_iter().flatten().enumerate() {
            match p.get("sscc") {
                None | Some(serde_json::Value::Null) => {}
                Some(serde_json::Value::String(s)) => ssccs.push((i as u32 + 1, s.as_str())),
                Some(_) => return Ok(Some(format!("package {}'s SSCC is not text", i + 1))),
            }
        }
        crate::sscc::foreign(conn, self.sender.business, edge.node, &ssccs)
    }

    fn check(
        &mut self,
        conn: &depot_sql::Db,
        entity: Entity,
        role: Role,
        id: i64,
    ) -> Result<Option<String>> {
        let business = self.sender.business;
        let what = entity.as_str();
        if entity == Entity::Business {
            return Ok((id != business.0)
                .then(|| format!("the event names another business than {business}")));
        }
        match self.owner(conn, entity, id)? {
            Some(o) if o.business != business => {
                tracing::warn!(
                    %business, edge = ?self.sender.edge.as_ref().map(|e| &e.edge_id),
                    %what, id, owner = %o.business,
                    "an event names a record of another business"
                );
                Ok(Some(format!(
                    "{what} {id} is not a record of business {business}"
                )))
            }
            Some(o) => Ok(o
                .warehouse
                .filter(|w| !self.sender.serves(*w))
                .map(|w| self.not_served(what, id, w))),
            None if role == Role::Names => Ok(Some(format!(
                "{what} {id} is not a record of business {business}"
            ))),
            None => Ok(self.outside_range(entity, id)),
        }
    }

    fn not_served(&self, what: &str, id: i64, w: WarehouseId) -> String {
        let edge = self.sender.edge.as_ref().map_or("", |e| e.edge_id.as_str());
        if what == "warehouse" {
            format!("warehouse {w} is not one edge {edge} serves")
        } else {
            format!("{what} {id} is in warehouse {w}, which edge {edge} does not serve")
        }
    }

    /// A record an edge makes under an id of another node's range would
    /// take that id from whichever box numbers it later.
    fn outside_range(&self, entity: Entity, id: i64) -> Option<String> {
        let edge = self.sender.edge.as_ref()?;
        if !entity.numbered_per_node() {
            return None;
        }
        let lo = i64::from(edge.node) << NODE_SHIFT;
        let hi = (i64::from(edge.node) + 1) << NODE_SHIFT;
        (id <= lo || id >= hi).then(|| {
            format!(
                "{} {id} is not numbered in the range of edge {} (node {}: {}..{})",
                entity.as_str(),
                edge.edge_id,
                edge.node,
                lo + 1,
                hi - 1
            )
        })
    }
}
