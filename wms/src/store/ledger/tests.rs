//! The ledger's levels and ceilings, on SQLite.

use super::*;
use depot_protocol::stock::{MAX_ON_HAND, MovementReason};
use depot_protocol::{MovementId, now};

fn record(conn: &Db, m: &mut Movement) -> Result<i64> {
    record_as(conn, m, "delta")
}

fn conn() -> Result<Db> {
    let conn = crate::store::memory(u32::MAX)?;
    conn.execute_batch("PRAGMA foreign_keys = OFF; -- the item and warehouse do not matter here")?;
    Ok(conn)
}

fn movement(delta: i64, lot: Option<&str>) -> Movement {
    Movement {
        id: MovementId::new(),
        business_id: BusinessId(1),
        item_id: ItemId(1),
        warehouse_id: WarehouseId(1),
        location: None,
        delta,
        reason: MovementReason::Adjusted,
        reference: None,
        note: None,
        lot: lot.map(str::to_owned),
        expiry: None,
        actor: "test".into(),
        origin: "cloud".into(),
        at: now(),
    }
}

fn movements(conn: &Db) -> Result<i64> {
    Ok(
        conn.query_row("SELECT COUNT(*) FROM stock_movements", params![], |r| {
            r.get(0)
        })?,
    )
}

fn refused_naming(r: Result<i64>, field: &str) {
    match r {
        Err(WmsError::Invalid { errors, .. }) => assert_eq!(errors[0].name, field),
        other => panic!("expected a 422 naming {field}, got {other:?}"),
    }
}

/// Up to the ceiling and no further, either way; what is refused leaves
/// no trace; the level stays an integer that later movements can move.
#[test]
fn levels_stay_within_the_ceiling() -> Result<()> {
    let conn = conn()?;
    assert_eq!(
        record(&conn, &mut movement(MAX_ON_HAND - 1, None))?,
        MAX_ON_HAND - 1
    );
    assert_eq!(record(&conn, &mut movement(1, None))?, MAX_ON_HAND);
    refused_naming(
        record_as(&conn, &mut movement(1, None), "quantity"),
        "quantity",
    );
    refused_naming(record(&conn, &mut movement(i64::MAX, None)), "delta");
    refused_naming(record(&conn, &mut movement(i64::MIN, None)), "delta");
    assert_eq!(movements(&conn)?, 2);
    assert_eq!(level(&conn, ItemId(1), WarehouseId(1))?.0, MAX_ON_HAND);
    assert_eq!(record(&conn, &mut movement(-1, None))?, MAX_ON_HAND - 1);
    assert_eq!(
        record(&conn, &mut movement(-2 * MAX_ON_HAND + 1, None))?,
        -MAX_ON_HAND
    );
    refused_naming(record(&conn, &mut movement(-1, None)), "delta");
    assert_eq!(record(&conn, &mut movement(5, None))?, 5 - MAX_ON_HAND);
    assert!(inconsistencies(&conn)?.is_empty());
    Ok(())
}

#[test]
fn lots_stay_within_the_ceiling() -> Result<()> {
    let conn = conn()?;
    record(&conn, &mut movement(MAX_ON_HAND, Some("L1")))?;
    record(&conn, &mut movement(-MAX_ON_HAND, None))?;
    // The item's level has room, the lot's has not.
    refused_naming(record(&conn, &mut movement(1, Some("L1"))), "delta");
    assert_eq!(record(&conn, &mut movement(1, Some("L2")))?, 1);
    assert!(inconsistencies(&conn)?.is_empty());
    Ok(())
}

#[test]
fn reservations_stay_within_the_ceiling() -> Result<()> {
    let conn = conn()?;
    let reserve = |delta| {
        reserve_as(
            &conn,
            BusinessId(1),
            ItemId(1),
            WarehouseId(1),
            delta,
            "status",
        )
    };
    reserve(MAX_ON_HAND)?;
    for delta in [1, i64::MAX, i64::MIN, -2 * MAX_ON_HAND - 1] {
        match reserve(delta) {
            Err(WmsError::Invalid { errors, .. }) => assert_eq!(errors[0].name, "status"),
            other => panic!("{delta}: {other:?}"),
        }
    }
    reserve(-MAX_ON_HAND)?;
    assert_eq!(level(&conn, ItemId(1), WarehouseId(1))?, (0, 0));
    Ok(())
}
