//! Packing: scans counted against the order, the weight checked, the pack
//! and its label.

use super::*;

#[test]
fn a_packing_task_needs_a_packable_order() {
    for status in [
        OrderStatus::Pending,
        OrderStatus::Packed,
        OrderStatus::Dispatched,
        OrderStatus::Cancelled,
    ] {
        let mut s = Station::new(rules());
        s.handle(Input::SetTask(Task::Packing {
            order_id: OrderId(7),
        }));
        let r = only_report(s.handle(Input::PlanLoaded(Ok(plan(status)))));
        assert_eq!(r.status, 409, "{status:?}");
        assert_eq!(s.task(), &Task::Idle {}, "the task is not taken");
    }
    let mut s = Station::new(rules());
    s.handle(Input::SetTask(Task::Packing {
        order_id: OrderId(8),
    }));
    let r = only_report(s.handle(Input::PlanLoaded(Err(Failure::not_found(
        "order 8 does not exist",
    )))));
    assert_eq!(r.status, 404);
    assert_eq!(s.task(), &Task::Idle {});
    let mut empty = plan(OrderStatus::Confirmed);
    empty.lines.clear();
    s.handle(Input::SetTask(Task::Packing {
        order_id: OrderId(7),
    }));
    assert_eq!(
        only_report(s.handle(Input::PlanLoaded(Ok(empty)))).status,
        409
    );
}

#[test]
fn packing_counts_scans_and_shows_progress() {
    let mut s = packing(rules());
    let r = only_report(scan(&mut s, "MUG", mug()));
    assert!(r.is_ok());
    assert_eq!(r.message, "MUG 1 of 2; 2 units left in order 7");
    let view = s.packing().expect("packing");
    assert_eq!(view.remaining, 2);
    assert_eq!(view.expected_weight_g, Some(950));
    assert_eq!(
        view.lines,
        [
            PackingLine {
                sku: "MUG".into(),
                ordered: 2,
                scanned: 1
            },
            PackingLine {
                sku: "TEA".into(),
                ordered: 1,
                scanned: 0
            }
        ]
    );
}

#[test]
fn one_unit_is_said_in_the_singular() {
    let mut s = packing(rules());
    only_report(scan(&mut s, "MUG", mug()));
    let r = only_report(scan(&mut s, "MUG", mug()));
    assert_eq!(r.message, "MUG 2 of 2; 1 unit left in order 7");
    assert_eq!(counted(0, "unit"), "0 units");
    assert_eq!(counted(3, "unit"), "3 units");
}

#[test]
fn a_foreign_item_or_one_too_many_is_refused_and_not_counted() {
    let mut s = packing(rules());
    let stranger = Scanned {
        item_id: ItemId(99),
        sku: "SOCK".into(),
        count: None,
    };
    let r = only_report(scan(&mut s, "SOCK", stranger));
    assert_eq!(r.status, 422);
    assert_eq!(r.errors[0].name, "SOCK");
    only_report(scan(&mut s, "TEA", tea()));
    let r = only_report(scan(&mut s, "TEA", tea()));
    assert_eq!(r.status, 409);
    assert!(r.message.contains("order 7 has 1"), "{}", r.message);
    // A GS1 count of 3 mugs is over the 2 ordered.
    let box_of_3 = Scanned {
        count: Some(3),
        ..mug()
    };
    assert_eq!(only_report(scan(&mut s, "01…37 3", box_of_3)).status, 409);
    assert_eq!(s.packing().map(|p| p.remaining), Some(2));
}

#[test]
fn an_unknown_code_keeps_the_engines_answer() {
    let mut s = packing(rules());
    s.handle(Input::Scan("???".into()));
    let r = only_report(s.handle(Input::Resolved(Err(Failure::not_found(
        "no item answers to \"???\"",
    )))));
    assert_eq!(r.status, 404);
    assert_eq!(s.packing().map(|p| p.remaining), Some(3));
}

#[test]
fn a_gs1_count_fills_several_units_at_once() {
    let mut s = packing(rules());
    let two = Scanned {
        count: Some(2),
        ..mug()
    };
    only_report(scan(&mut s, "0109506000134352\u{1d}372", two));
    assert_eq!(scan(&mut s, "TEA", tea()), Step::Do(Effect::Weigh));
}

#[test]
fn the_last_scan_weighs_packs_and_prints() {
    let mut s = packing(rules());
    assert_eq!(scan_all(&mut s), Step::Do(Effect::Weigh));
    assert_eq!(
        s.handle(Input::Weighed(Ok(960))),
        Step::Do(Effect::Pack {
            order_id: OrderId(7),
            items: vec![
                ("MUG".into(), 1),
                ("4006381333931".into(), 1),
                ("TEA".into(), 1)
            ],
            weight_g: 960,
            print_label: true,
        })
    );
    // The pack and its label's print job come back from one write.
    let packed = PackedOrder {
        shipment_id: ShipmentId(5),
        result: json!({"shipment": {"id": 5}}),
        label_job: Some(json!({"id": 11})),
    };
    let r = only_report(s.handle(Input::Packed(Ok(packed))));
    assert!(r.is_ok());
    assert!(r.message.ends_with("label queued"), "{}", r.message);
    assert_eq!(r.result["label_job"]["id"], 11);
    assert_eq!(r.result["pack"]["shipment"]["id"], 5);
    assert!(r.message.contains("order 7 packed"), "{}", r.message);
    assert_eq!(s.task(), &Task::Idle {});
    assert_eq!(s.packing(), None);
}

#[test]
fn a_wrong_weight_is_refused_with_expected_and_measured() {
    // 950 g expected; 5% (48 g) is more than 20 g.
    for (measured, ok) in [
        (950, true),
        (998, true),
        (902, true),
        (999, false),
        (901, false),
        (1500, false),
    ] {
        let mut s = packing(rules());
        scan_all(&mut s);
        let step = s.handle(Input::Weighed(Ok(measured)));
        if ok {
            assert!(matches!(step, Step::Do(Effect::Pack { .. })), "{measured}");
            continue;
        }
        let r = only_report(step);
        assert_eq!(r.status, 422, "{measured}");
        assert!(
            r.message.contains(&format!("{measured} g")) && r.message.contains("950 g"),
            "{}",
            r.message
        );
        assert_eq!(r.errors[0].name, "weight_g");
        assert!(
            r.message.starts_with("order 7 was not packed")
                && r.message
                    .ends_with("check its contents, then retry the pack, or release the order"),
            "{}",
            r.message
        );
        // Nothing is packed; the package can be weighed again.
        assert_eq!(s.handle(Input::Pack), Step::Do(Effect::Weigh));
    }
}

#[test]
fn the_gram_tolerance_applies_to_light_packages() {
    let light = Rules {
        tolerance_g: 30,
        tolerance_pct: 1.0,
        packaging_g: 0,
        ..rules()
    };
    let mut s = packing(light);
    scan_all(&mut s);
    // 850 g expected: 1% is 9 g, so the 30 g bound applies.
    assert!(matches!(
        s.handle(Input::Weighed(Ok(879))),
        Step::Do(Effect::Pack { .. })
    ));
}

#[test]
fn an_empty_scale_or_a_scale_error_is_reported() {
    let mut s = packing(rules());
    scan_all(&mut s);
    assert_eq!(only_report(s.handle(Input::Weighed(Ok(0)))).status, 422);
    s.handle(Input::Pack);
    let r = only_report(s.handle(Input::Weighed(Err(Failure::new(
        axum::http::StatusCode::GATEWAY_TIMEOUT,
        "the weight did not settle within 5s",
    )))));
    assert_eq!(r.status, 504);
    // The scale's failure is the edge's own: no fix at the station but a
    // second try, then someone who can read the edge's log.
    assert_eq!(
        r.message,
        "order 7 was not packed (the weight did not settle within 5s): retry the pack; if it fails again, release the order and call a supervisor"
    );
    assert_eq!(s.handle(Input::Pack), Step::Do(Effect::Weigh));
}

#[test]
fn without_catalog_weights_the_check_is_skipped() {
    let mut s = Station::new(rules());
    s.handle(Input::SetTask(Task::Packing {
        order_id: OrderId(7),
    }));
    let mut p = plan(OrderStatus::Confirmed);
    p.lines[1].unit_weight_g = None;
    only_report(s.handle(Input::PlanLoaded(Ok(p))));
    assert_eq!(s.packing().and_then(|p| p.expected_weight_g), None);
    scan_all(&mut s);
    assert!(matches!(
        s.handle(Input::Weighed(Ok(5000))),
        Step::Do(Effect::Pack { weight_g: 5000, .. })
    ));
}

#[test]
fn without_a_scale_the_catalog_weight_is_the_package_weight() {
    let no_scale = Rules {
        has_scale: false,
        ..rules()
    };
    let mut s = packing(no_scale.clone());
    assert!(matches!(
        scan_all(&mut s),
        Step::Do(Effect::Pack { weight_g: 950, .. })
    ));
    let mut s = Station::new(no_scale);
    s.handle(Input::SetTask(Task::Packing {
        order_id: OrderId(7),
    }));
    let mut p = plan(OrderStatus::Confirmed);
    p.lines[0].unit_weight_g = None;
    only_report(s.handle(Input::PlanLoaded(Ok(p))));
    assert_eq!(only_report(scan_all(&mut s)).status, 422);
}

#[test]
fn without_a_printer_packing_ends_at_the_pack() {
    let mut s = packing(Rules {
        has_printer: false,
        ..rules()
    });
    scan_all(&mut s);
    assert!(matches!(
        s.handle(Input::Weighed(Ok(950))),
        Step::Do(Effect::Pack {
            print_label: false,
            ..
        })
    ));
    let packed = PackedOrder {
        shipment_id: ShipmentId(5),
        result: json!({}),
        label_job: None,
    };
    let r = only_report(s.handle(Input::Packed(Ok(packed))));
    assert!(r.is_ok() && r.message.contains("950 g"), "{}", r.message);
    assert_eq!(s.task(), &Task::Idle {});
}

#[test]
fn an_explicit_pack_of_an_incomplete_order_names_what_is_missing() {
    let mut s = packing(rules());
    only_report(scan(&mut s, "MUG", mug()));
    let r = only_report(s.handle(Input::Pack));
    assert_eq!(r.status, 422);
    assert_eq!(
        r.errors,
        [
            FieldError::new("MUG", "missing 1 of 2"),
            FieldError::new("TEA", "missing 1 of 1")
        ]
    );
}

#[test]
fn a_refused_pack_keeps_the_scans_for_another_try() {
    let mut s = packing(rules());
    scan_all(&mut s);
    s.handle(Input::Weighed(Ok(950)));
    let r = only_report(s.handle(Input::Packed(Err(Failure::conflict(
        "order 7 still has 1 unit to pick",
    )))));
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message,
        "order 7 was not packed (order 7 still has 1 unit to pick): correct what it says, then retry the pack, or release the order"
    );
    assert_eq!(s.packing().map(|p| p.remaining), Some(0));
    assert_eq!(s.handle(Input::Pack), Step::Do(Effect::Weigh));
}

#[test]
fn a_pack_that_keeps_failing_is_released_and_the_order_stays_packable() {
    let mut s = packing(rules());
    scan_all(&mut s);
    for attempt in 0..2 {
        if attempt > 0 {
            // Retried: weighed and packed again, from the same scans.
            assert_eq!(s.handle(Input::Pack), Step::Do(Effect::Weigh));
        }
        s.handle(Input::Weighed(Ok(950)));
        let r = only_report(s.handle(Input::Packed(Err(Failure::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal error: see the edge's log",
        )))));
        assert_eq!(r.status, 500);
        assert!(r.message.contains("call a supervisor"), "{}", r.message);
    }
    let r = only_report(s.handle(Input::Release));
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        r.message,
        "order 7 released, not packed: keep its 3 scanned units together with the order; it can be packed again later"
    );
    assert_eq!(
        r.result,
        json!({"task": {"task": "idle"}, "released": {"task": "packing", "order_id": 7}})
    );
    assert_eq!((s.task(), s.packing()), (&Task::Idle {}, None));
    assert_eq!(only_report(s.handle(Input::Scan("MUG".into()))).status, 409);
    // Released twice: nothing to release, said as such, still accepted.
    let r = only_report(s.handle(Input::Release));
    assert_eq!(
        (r.status, r.message.as_str()),
        (200, "station pack-1 has no task: nothing to release")
    );
    // The same order, set again, starts from nothing scanned.
    let again = packing(rules());
    assert_eq!(again.packing().map(|p| p.remaining), Some(3));
}

#[test]
fn a_pack_whose_label_cannot_be_queued_is_no_pack_and_can_be_retried() {
    let mut s = packing(rules());
    scan_all(&mut s);
    s.handle(Input::Weighed(Ok(950)));
    let r = only_report(s.handle(Input::Packed(Err(Failure::conflict(
        "no printer named \"label-1\" has reached this edge: nothing was packed",
    )))));
    assert_eq!(r.status, 409);
    assert!(
        r.message.contains("order 7 was not packed") && r.message.contains("retry the pack"),
        "{}",
        r.message
    );
    // The scans stay: the same pack again, once the printer is there.
    assert_eq!(
        s.task(),
        &Task::Packing {
            order_id: OrderId(7)
        }
    );
    assert!(matches!(s.handle(Input::Pack), Step::Do(Effect::Weigh)));
}

#[test]
fn a_new_task_replaces_a_packing_in_progress() {
    let mut s = packing(rules());
    only_report(scan(&mut s, "MUG", mug()));
    let r = only_report(s.handle(Input::SetTask(Task::Idle {})));
    assert!(r.is_ok());
    assert_eq!(s.packing(), None);
    assert_eq!(only_report(s.handle(Input::Scan("MUG".into()))).status, 409);
}
