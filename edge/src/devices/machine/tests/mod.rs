//! The station machine's tests: what every task shares (an idle station,
//! inputs out of turn, one report per input, the task bodies), with the
//! scans passed to the engine in `scans.rs` and packing in `packing.rs`.

mod packing;
mod scans;

use super::*;
use depot_protocol::{OrderId, OrderStatus, ShipmentId, WaveId};

fn rules() -> Rules {
    Rules {
        name: "pack-1".into(),
        has_scale: true,
        has_printer: true,
        tolerance_g: 20,
        tolerance_pct: 5.0,
        packaging_g: 100,
    }
}

fn plan(status: OrderStatus) -> PackPlan {
    PackPlan {
        order_id: OrderId(7),
        status,
        lines: vec![
            PlanLine {
                item_id: ItemId(1),
                sku: "MUG".into(),
                quantity: 2,
                unit_weight_g: Some(300),
            },
            PlanLine {
                item_id: ItemId(2),
                sku: "TEA".into(),
                quantity: 1,
                unit_weight_g: Some(250),
            },
        ],
    }
}

fn mug() -> Scanned {
    Scanned {
        item_id: ItemId(1),
        sku: "MUG".into(),
        count: None,
    }
}

fn tea() -> Scanned {
    Scanned {
        item_id: ItemId(2),
        sku: "TEA".into(),
        count: None,
    }
}

fn only_report(step: Step) -> Report {
    match step {
        Step::Report(r) => r,
        other => panic!("expected a report, got {other:?}"),
    }
}

/// A station packing order 7 (2 MUG, 1 TEA: 950 g with packaging).
fn packing(rules: Rules) -> Station {
    let mut s = Station::new(rules);
    assert_eq!(
        s.handle(Input::SetTask(Task::Packing {
            order_id: OrderId(7)
        })),
        Step::Do(Effect::LoadPlan(OrderId(7)))
    );
    let r = only_report(s.handle(Input::PlanLoaded(Ok(plan(OrderStatus::Picking)))));
    assert!(r.is_ok(), "{r:?}");
    assert!(r.message.contains("3 units"), "{}", r.message);
    s
}

fn scan(s: &mut Station, code: &str, scanned: Scanned) -> Step {
    assert_eq!(
        s.handle(Input::Scan(code.into())),
        Step::Do(Effect::Resolve(code.into()))
    );
    s.handle(Input::Resolved(Ok(scanned)))
}

/// Scans the whole order; answers the actions of the last scan.
fn scan_all(s: &mut Station) -> Step {
    only_report(scan(s, "MUG", mug()));
    only_report(scan(s, "4006381333931", mug()));
    scan(s, "TEA", tea())
}

#[test]
fn an_idle_station_refuses_scans_and_says_how_to_start() {
    let mut s = Station::new(rules());
    let r = only_report(s.handle(Input::Scan("X".into())));
    assert_eq!(r.status, 409);
    assert!(
        r.message.contains("PUT /v1/edge/stations/pack-1/task"),
        "{}",
        r.message
    );
    let r = only_report(s.handle(Input::Pack));
    assert_eq!(r.status, 409);
}

#[test]
fn inputs_out_of_turn_are_reported_not_acted_on() {
    let mut s = packing(rules());
    let r = only_report(s.handle(Input::Weighed(Ok(950))));
    assert_eq!(r.status, 500);
    let r = only_report(s.handle(Input::Packed(Ok(PackedOrder {
        shipment_id: ShipmentId(1),
        result: json!({}),
        label_job: None,
    }))));
    assert_eq!(r.status, 500);
    // While a scan is being resolved, the machine still waits for it.
    s.handle(Input::Scan("MUG".into()));
    assert_eq!(only_report(s.handle(Input::Pack)).status, 500);
    assert!(only_report(s.handle(Input::Resolved(Ok(mug())))).is_ok());
}

#[test]
fn every_input_from_the_floor_ends_in_one_report() {
    // Drive every path with the engine answering yes, and then failing at
    // each effect in turn: each scan still ends in exactly one report.
    for fail_at in 0..6 {
        let mut s = packing(rules());
        let mut reports = 0;
        let mut effects = 0;
        for code in ["MUG", "MUG", "TEA"] {
            let mut step = s.handle(Input::Scan(code.into()));
            loop {
                let effect = match step {
                    Step::Report(_) => {
                        reports += 1;
                        break;
                    }
                    Step::Do(effect) => effect,
                };
                effects += 1;
                let fail = effects == fail_at;
                let next = match effect {
                    Effect::Resolve(code) if fail => Input::Resolved(Err(Failure::not_found(code))),
                    Effect::Resolve(code) => {
                        Input::Resolved(Ok(if code == "TEA" { tea() } else { mug() }))
                    }
                    Effect::Weigh if fail => Input::Weighed(Err(Failure::conflict("x"))),
                    Effect::Weigh => Input::Weighed(Ok(950)),
                    Effect::Pack { .. } if fail => Input::Packed(Err(Failure::conflict("x"))),
                    Effect::Pack { .. } => Input::Packed(Ok(PackedOrder {
                        shipment_id: ShipmentId(1),
                        result: json!({}),
                        label_job: Some(json!({})),
                    })),
                    other => panic!("unexpected {other:?}"),
                };
                step = s.handle(next);
            }
        }
        assert_eq!(reports, 3, "failing at effect {fail_at}");
    }
}

#[test]
fn tasks_read_as_the_route_documents_them() {
    let parse = |v: serde_json::Value| serde_json::from_value::<Task>(v);
    assert_eq!(
        parse(json!({"task": "picking", "wave_id": 3})).ok(),
        Some(Task::Picking {
            wave_id: WaveId(3),
            order_id: None
        })
    );
    assert_eq!(
        parse(json!({"task": "packing", "order_id": 7})).ok(),
        Some(Task::Packing {
            order_id: OrderId(7)
        })
    );
    assert_eq!(
        parse(json!({"task": "receiving", "inbound_id": 1, "location": "D"})).ok(),
        Some(Task::Receiving {
            inbound_id: 1,
            location: Some("D".into())
        })
    );
    assert_eq!(
        parse(json!({"task": "putaway", "task_id": 3})).ok(),
        Some(Task::Putaway {
            task_id: depot_protocol::PutawayTaskId(3)
        })
    );
    assert!(parse(json!({"task": "putaway"})).is_err());
    assert_eq!(
        parse(json!({"task": "counting", "count_id": 5})).ok(),
        Some(Task::Counting {
            count_id: depot_protocol::CountId(5)
        })
    );
    assert_eq!(
        parse(json!({"task": "returns", "grade": "damaged"})).ok(),
        Some(Task::Returns {
            return_id: None,
            grade: depot_protocol::returns::Grade::Damaged
        })
    );
    assert!(parse(json!({"task": "returns", "grade": "resell"})).is_err());
    assert!(parse(json!({"task": "returns"})).is_err());
    assert_eq!(parse(json!({"task": "idle"})).ok(), Some(Task::Idle {}));
    assert!(parse(json!({"task": "dancing"})).is_err());
    assert!(parse(json!({"task": "picking"})).is_err());
    assert!(parse(json!({"task": "packing", "order_id": 7, "extra": 1})).is_err());
    assert!(parse(json!({"task": "idle", "extra": 1})).is_err());
}

#[test]
fn an_effect_that_cannot_be_carried_out_still_gets_its_answer() {
    let mut s = packing(rules());
    let Step::Do(effect) = s.handle(Input::Scan("MUG".into())) else {
        panic!("expected an effect");
    };
    let r = only_report(s.handle(effect.failed(Failure::conflict("no key"))));
    assert_eq!((r.status, r.message.as_str()), (409, "no key"));
    // The station is not stuck: the next scan is resolved as usual.
    assert_eq!(
        s.handle(Input::Scan("MUG".into())),
        Step::Do(Effect::Resolve("MUG".into()))
    );
}
