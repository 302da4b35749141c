//! Picking, receiving, putaway and counting: scans the station passes to
//! the engine.

use super::*;

#[test]
fn picking_passes_each_scan_to_the_engine_and_reports_its_answer() {
    let mut s = Station::new(rules());
    let task = Task::Picking {
        wave_id: WaveId(3),
        order_id: Some(OrderId(9)),
    };
    let r = only_report(s.handle(Input::SetTask(task.clone())));
    assert_eq!(r.result["task"]["task"], "picking");
    assert_eq!(s.task(), &task);
    assert_eq!(
        s.handle(Input::Scan("MUG".into())),
        Step::Do(Effect::Pick {
            wave_id: WaveId(3),
            order_id: Some(OrderId(9)),
            code: "MUG".into()
        })
    );
    let answer = json!({"remaining": 1});
    let r = only_report(s.handle(Input::Done(Ok(Outcome {
        message: "picked".into(),
        result: answer.clone(),
    }))));
    assert_eq!((r.status, r.result), (200, answer));
    // A refusal keeps the engine's status and message.
    s.handle(Input::Scan("NOPE".into()));
    let r = only_report(s.handle(Input::Done(Err(Failure::not_found("no item NOPE")))));
    assert_eq!((r.status, r.message.as_str()), (404, "no item NOPE"));
    assert!(!r.is_ok());
}

#[test]
fn receiving_passes_the_location_along() {
    let mut s = Station::new(rules());
    only_report(s.handle(Input::SetTask(Task::Receiving {
        inbound_id: 4,
        location: Some("DOCK-1".into()),
    })));
    assert_eq!(
        s.handle(Input::Scan("0109506000134352\u{1d}3712".into())),
        Step::Do(Effect::Receive {
            inbound_id: 4,
            location: Some("DOCK-1".into()),
            code: "0109506000134352\u{1d}3712".into()
        })
    );
}

#[test]
fn putaway_scans_come_in_pairs_goods_then_location() {
    let mut s = Station::new(rules());
    let task_id = depot_protocol::PutawayTaskId(9);
    let r = only_report(s.handle(Input::SetTask(Task::Putaway { task_id })));
    assert!(r.message.contains("scan the goods"), "{}", r.message);
    // The goods are held: nothing moves until the location is scanned.
    let r = only_report(s.handle(Input::Scan("ΦΕΤΑ-1".into())));
    assert!(r.message.contains("now scan the location"), "{}", r.message);
    assert_eq!(
        s.handle(Input::Scan("Β-01".into())),
        Step::Do(Effect::Putaway {
            task_id,
            code: "ΦΕΤΑ-1".into(),
            location: "Β-01".into()
        })
    );
    // A refused pair starts over from the goods.
    let r = only_report(s.handle(Input::Done(Err(Failure::invalid("full")))));
    assert_eq!(r.status, 422);
    only_report(s.handle(Input::Scan("ΦΕΤΑ-1".into())));
    // A release forgets the goods held.
    only_report(s.handle(Input::Release));
    assert_eq!(s.task(), &Task::Idle {});
    only_report(s.handle(Input::SetTask(Task::Putaway { task_id })));
    let r = only_report(s.handle(Input::Scan("ΦΕΤΑ-2".into())));
    assert!(r.message.starts_with("ΦΕΤΑ-2"), "{}", r.message);
}

#[test]
fn releasing_a_pick_or_a_reception_keeps_what_was_done() {
    for (task, said) in [
        (
            Task::Picking {
                wave_id: WaveId(3),
                order_id: None,
            },
            "wave 3 released: what was picked stays picked",
        ),
        (
            Task::Receiving {
                inbound_id: 4,
                location: None,
            },
            "inbound order 4 released: what was received stays received",
        ),
    ] {
        let mut s = Station::new(rules());
        assert!(only_report(s.handle(Input::SetTask(task))).is_ok());
        let r = only_report(s.handle(Input::Release));
        assert_eq!((r.status, r.message.as_str()), (200, said));
        assert_eq!(s.task(), &Task::Idle {});
    }
    // Nothing scanned yet: nothing to put aside.
    let mut s = packing(rules());
    let r = only_report(s.handle(Input::Release));
    assert_eq!(r.message, "order 7 released, not packed");
}

#[test]
fn counting_takes_a_label_then_goods_then_the_label_again() {
    let mut s = Station::new(rules());
    let count_id = depot_protocol::CountId(5);
    let r = only_report(s.handle(Input::SetTask(Task::Counting { count_id })));
    assert!(
        r.message.contains("scan a location's label"),
        "{}",
        r.message
    );
    // The first scan is where the counter stands: nothing is counted yet.
    let r = only_report(s.handle(Input::Scan("Γ-01".into())));
    assert!(r.message.starts_with("counting Γ-01"), "{}", r.message);
    let goods = Effect::Count {
        count_id,
        location: "Γ-01".into(),
        code: Some("ΦΕΤΑ".into()),
    };
    assert_eq!(
        s.handle(Input::Scan("ΦΕΤΑ".into())),
        Step::Do(goods.clone())
    );
    only_report(s.handle(Input::Done(Err(Failure::not_found("no item")))));
    // A refusal of the goods keeps the location; one naming the location
    // forgets it, so the next scan is a label again.
    assert_eq!(s.handle(Input::Scan("ΦΕΤΑ".into())), Step::Do(goods));
    let wrong = Failure::invalid("not in the count")
        .with_errors(vec![FieldError::new("location", "not in the count")]);
    only_report(s.handle(Input::Done(Err(wrong))));
    let r = only_report(s.handle(Input::Scan("Γ-02".into())));
    assert!(r.message.starts_with("counting Γ-02"), "{}", r.message);
    // The label again closes it.
    assert_eq!(
        s.handle(Input::Scan("Γ-02".into())),
        Step::Do(Effect::Count {
            count_id,
            location: "Γ-02".into(),
            code: None,
        })
    );
    only_report(s.handle(Input::Done(Ok(Outcome {
        message: "Γ-02 counted".into(),
        result: json!({}),
    }))));
    let r = only_report(s.handle(Input::Scan("Γ-03".into())));
    assert!(r.message.starts_with("counting Γ-03"), "{}", r.message);
}

#[test]
fn the_returns_bench_opens_a_return_by_its_rma_label_then_grades_units() {
    use depot_protocol::ReturnId;
    use depot_protocol::returns::Grade;
    let mut s = Station::new(rules());
    let r = only_report(s.handle(Input::SetTask(Task::Returns {
        return_id: None,
        grade: Grade::Damaged,
    })));
    assert!(r.message.contains("RMA label"), "{}", r.message);
    // A unit before its parcel's label: which return is it of?
    let r = only_report(s.handle(Input::Scan("ΦΕΤΑ".into())));
    assert_eq!(r.status, 409, "{}", r.message);
    let r = only_report(s.handle(Input::Scan("RMA-42".into())));
    assert_eq!(r.message, "RMA-42 open: scan each unit to grade it damaged");
    let unit = Effect::Return {
        return_id: ReturnId(42),
        grade: Grade::Damaged,
        code: "ΦΕΤΑ".into(),
    };
    assert_eq!(s.handle(Input::Scan("ΦΕΤΑ".into())), Step::Do(unit.clone()));
    only_report(s.handle(Input::Done(Err(Failure::conflict("all graded")))));
    // A refusal keeps the return open; another parcel's label opens that.
    assert_eq!(s.handle(Input::Scan("ΦΕΤΑ".into())), Step::Do(unit));
    only_report(s.handle(Input::Done(Ok(Outcome {
        message: "1 × ΦΕΤΑ damaged: to Q-1; RMA-42 received".into(),
        result: json!({}),
    }))));
    only_report(s.handle(Input::Scan("RMA-43".into())));
    assert_eq!(
        s.handle(Input::Scan("ΦΕΤΑ".into())),
        Step::Do(Effect::Return {
            return_id: ReturnId(43),
            grade: Grade::Damaged,
            code: "ΦΕΤΑ".into(),
        })
    );
}
