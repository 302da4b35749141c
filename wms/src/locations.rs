//! Locations: made and edited at the cloud or on the floor (an edge numbers
//! its own in its range, offline too), each save logged as
//! `location.saved`. Stock names a location by its code within the
//! warehouse (see `depot_protocol::location`).

use crate::store::{self, locations as sql, tenants};
use crate::{Result, Wms, WmsError};
use depot_protocol::event::EventKind;
use depot_protocol::location::{
    CheckedLocation, Location, LocationFields, LocationKind, LocationRecord,
};
use depot_protocol::{BusinessId, FieldError, ItemId, LocationId, Page, WarehouseId, now};
use depot_sql::Db;

pub use sql::LocationFilter;

fn load(conn: &Db, business: BusinessId, id: LocationId) -> Result<Location> {
    sql::get(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("location {id} does not exist")))
}

/// The location of `warehouse` with this code, or a 422 naming `field`:
/// stock is only booked where a location is on record.
pub(crate) fn require(
    conn: &Db,
    warehouse: WarehouseId,
    code: &str,
    field: &str,
) -> Result<LocationRecord> {
    sql::by_code(conn, warehouse, code)?.ok_or_else(|| {
        WmsError::invalid(vec![FieldError::new(
            field,
            format!("warehouse {warehouse} has no location {code}"),
        )])
    })
}

fn save(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    id: Option<LocationId>,
    fields: LocationFields,
) -> Result<Location> {
    let current = match id {
        Some(id) => Some(CheckedLocation::from(&load(conn, business, id)?.record)),
        None => None,
    };
    let checked = fields.apply(current).map_err(WmsError::invalid)?;
    let at = now();
    let id = match id {
        Some(id) => {
            // The checks kept the warehouse and code: the row is there.
            sql::update(conn, id, &checked, &at)?;
            id
        }
        None => {
            if tenants::warehouse(conn, business, checked.warehouse_id)?.is_none() {
                return Err(WmsError::invalid(vec![FieldError::new(
                    "warehouse_id",
                    "no such warehouse in this business",
                )]));
            }
            if sql::by_code(conn, checked.warehouse_id, &checked.code)?.is_some() {
                return Err(WmsError::field_conflict(
                    "code",
                    format!(
                        "warehouse {} already has a location {}",
                        checked.warehouse_id, checked.code
                    ),
                ));
            }
            sql::insert(conn, business, &checked, &at)?
        }
    };
    let saved = load(conn, business, id)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::LocationSaved,
        &saved.record,
    )?;
    Ok(saved)
}

/// Makes a `pick` location of every code items are assigned to (of one
/// item, or of all) that has no record yet: an item's own bin was a code
/// before locations were records, and a code an item names must be a
/// place stock can be booked at. The cloud's work: records made on every
/// node at once would be numbered differently on each.
pub(crate) fn record_assignments(conn: &Db, origin: &str, item: Option<ItemId>) -> Result<usize> {
    let missing = sql::unrecorded_assignments(conn, item)?;
    for (business, warehouse_id, code) in &missing {
        let fields = CheckedLocation {
            warehouse_id: *warehouse_id,
            code: code.clone(),
            zone: None,
            kind: LocationKind::Pick,
            sequence: None,
            max_units: None,
            max_volume_cm3: None,
            max_weight_g: None,
            mixed_lots: false,
        };
        let id = sql::insert(conn, *business, &fields, &now())?;
        let saved = load(conn, *business, id)?;
        store::events::append(
            conn,
            origin,
            Some(*business),
            EventKind::LocationSaved,
            &saved.record,
        )?;
    }
    Ok(missing.len())
}

impl Wms {
    pub async fn create_location(
        &self,
        business: BusinessId,
        fields: LocationFields,
    ) -> Result<Location> {
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            save(conn, &origin, business, None, fields)
        })
        .await
    }

    pub async fn edit_location(
        &self,
        business: BusinessId,
        id: LocationId,
        fields: LocationFields,
    ) -> Result<Location> {
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            save(conn, &origin, business, Some(id), fields)
        })
        .await
    }

    pub async fn location(&self, business: BusinessId, id: LocationId) -> Result<Location> {
        self.read(move |conn| load(conn, business, id)).await
    }

    /// The location of a business's warehouse with this code, if any.
    pub async fn location_by_code(
        &self,
        business: BusinessId,
        warehouse: WarehouseId,
        code: &str,
    ) -> Result<Option<LocationRecord>> {
        let code = code.to_owned();
        self.read(move |conn| {
            Ok(sql::by_code(conn, warehouse, &code)?.filter(|l| l.business_id == business))
        })
        .await
    }

    pub async fn list_locations(
        &self,
        business: BusinessId,
        filter: LocationFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<Location>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }

    /// Cloud: makes records of the codes items were assigned to before
    /// locations were records (see [`record_assignments`]). Answers how
    /// many it made; none once done.
    pub async fn record_item_locations(&self) -> Result<usize> {
        let origin = self.origin().to_owned();
        self.write(move |conn| record_assignments(conn, &origin, None))
            .await
    }
}
