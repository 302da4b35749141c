//! Who owns a record an event names: its business and, where it has one,
//! its warehouse. What sync checks before it applies another node's event
//! (see `replica::ownership`).

use crate::error::Result;
use depot_protocol::catalogue::refs::Entity;
use depot_protocol::{BusinessId, WarehouseId};
use depot_sql::{Db, Later, params};

/// A record's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub business: BusinessId,
    /// The warehouse it lives in; `None` for what belongs to the whole
    /// business (items, printers).
    pub warehouse: Option<WarehouseId>,
}

/// The owner of record `id` of `entity`, if there is such a record here.
/// `Entity::Business` is no table's record: it has none.
pub fn owner(conn: &Db, entity: Entity, id: i64) -> Result<Option<Owner>> {
    match owner_later(conn, entity, id)? {
        Some(read) => Ok(read.first(conn)?),
        None => Ok(None),
    }
}

/// [`owner`], sent to be read later (`Later::first`): on PostgreSQL the
/// owners of a batch's records are looked up in one round trip. `None`
/// for `Entity::Business`, which has no owner.
pub fn owner_later(conn: &Db, entity: Entity, id: i64) -> Result<Option<Later<Owner>>> {
    let sql = match entity {
        Entity::Business => return Ok(None),
        Entity::Warehouse => "SELECT business_id, id FROM warehouses WHERE id = ?1",
        Entity::Item => "SELECT business_id, NULL FROM items WHERE id = ?1",
        Entity::Order => "SELECT business_id, warehouse_id FROM orders WHERE id = ?1",
        Entity::Inbound => "SELECT business_id, warehouse_id FROM inbound_orders WHERE id = ?1",
        Entity::Wave => "SELECT business_id, warehouse_id FROM waves WHERE id = ?1",
        Entity::PickLine => {
            "SELECT w.business_id, w.warehouse_id FROM pick_lines l JOIN waves w ON w.id = l.wave_id
             WHERE l.id = ?1"
        }
        Entity::Shipment => "SELECT business_id, warehouse_id FROM shipments WHERE id = ?1",
        Entity::DispatchRun => "SELECT business_id, warehouse_id FROM dispatch_runs WHERE id = ?1",
        Entity::Printer => "SELECT business_id, NULL FROM printers WHERE id = ?1",
        Entity::PrintJob => "SELECT business_id, NULL FROM print_jobs WHERE id = ?1",
        Entity::Key => "SELECT business_id, NULL FROM api_keys WHERE id = ?1",
        Entity::Location => "SELECT business_id, warehouse_id FROM locations WHERE id = ?1",
        Entity::PutawayTask => "SELECT business_id, warehouse_id FROM putaway_tasks WHERE id = ?1",
        Entity::Count => "SELECT business_id, warehouse_id FROM counts WHERE id = ?1",
        Entity::Return => "SELECT business_id, warehouse_id FROM returns WHERE id = ?1",
        Entity::Channel => "SELECT business_id, NULL FROM channels WHERE id = ?1",
        Entity::ReplenishTask => {
            "SELECT business_id, warehouse_id FROM replenish_tasks WHERE id = ?1"
        }
    };
    Ok(Some(conn.query_later(sql, params![id], |r| {
        Ok(Owner {
            business: BusinessId(r.get(0)?),
            warehouse: r.get::<Option<i64>>(1)?.map(WarehouseId),
        })
    })?))
}
