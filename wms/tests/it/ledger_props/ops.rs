//! The operations a sequence is made of, and how they are drawn.

use super::*;

#[derive(Debug, Clone)]
pub(super) enum Op {
    Adjust {
        item: usize,
        wh: usize,
        at: usize,
        delta: i64,
    },
    Count {
        item: usize,
        wh: usize,
        at: usize,
        counted: i64,
    },
    Transfer {
        item: usize,
        quantity: i64,
        from: usize,
        to: usize,
        within: bool,
    },
    Ingest {
        reference: u8,
        item: usize,
        quantity: i64,
    },
    Status {
        reference: u8,
        to: usize,
    },
    /// A reception into the first warehouse: to its dock, with a putaway
    /// task.
    Receive {
        item: usize,
        quantity: i64,
    },
    /// A putaway scan of one of the tasks still open, to a location.
    Putaway {
        task: usize,
        at: usize,
        quantity: i64,
    },
    /// A level of item X at the pick face (a refill is made at once when
    /// it is below the min and a rack holds some).
    Level {
        min: i64,
        span: i64,
    },
    /// Units of item X taken out of the pick face (a refill follows when
    /// that takes it below its min).
    TakeFromFace {
        quantity: i64,
    },
    /// The open refill task, if any, scanned whole.
    Refill,
    /// A cycle count of one location of the first warehouse: both items
    /// counted, stock moved there after the scans, then approved or
    /// cancelled.
    CountTask {
        at: usize,
        counted: [i64; 2],
        moved: i64,
        approve: bool,
    },
    /// A return of an order's units (refused unless it went out, and with
    /// units left to return), each unit graded: restock (to the returns
    /// bay, with a putaway task), damaged (quarantine) or scrap.
    Return {
        reference: u8,
        grades: Vec<usize>,
    },
    /// A wave of the first warehouse's confirmed orders, each line picked
    /// whole by scan: the orders then ship from where they were picked.
    Wave,
    /// An order one step further along its path (confirmed, picking,
    /// packed, dispatched, delivered): a `Status` the order can take, so
    /// sequences reach dispatch and returns often.
    Advance {
        reference: u8,
    },
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Wave),
        4 => (0..6u8).prop_map(|reference| Op::Advance { reference }),
        2 => (0..6u8, proptest::collection::vec(0..3usize, 1..4))
            .prop_map(|(reference, grades)| Op::Return { reference, grades }),
        3 => (0..2usize, 0..2usize, 0..=PICK, -5i64..10)
            // The dock and the pick face are the first warehouse's.
            .prop_filter("non-zero, somewhere", |(_, wh, at, d)| {
                *d != 0 && (*at <= NONE || *wh == 0)
            })
            .prop_map(|(item, wh, at, delta)| Op::Adjust {
                item,
                wh,
                at,
                delta
            }),
        1 => (0..2usize, 0..2usize, 0..=NONE, 0i64..15).prop_map(|(item, wh, at, counted)| {
            Op::Count {
                item,
                wh,
                at,
                counted,
            }
        }),
        1 => (0..2usize, 1i64..5, 0..=NONE, 0..=NONE, any::<bool>())
            .prop_filter("somewhere else", |(_, _, from, to, within)| {
                !*within || (*to != NONE && from != to)
            })
            .prop_map(|(item, quantity, from, to, within)| Op::Transfer {
                item,
                quantity,
                from,
                to,
                within
            }),
        3 => (0..6u8, 0..2usize, 1i64..4).prop_map(|(reference, item, quantity)| Op::Ingest {
            reference,
            item,
            quantity
        }),
        1 => (0..6u8, 0..7usize).prop_map(|(reference, to)| Op::Status { reference, to }),
        1 => (0..2usize, 1i64..6).prop_map(|(item, quantity)| Op::Receive { item, quantity }),
        1 => (0..8usize, 0..NONE, 1i64..6).prop_map(|(task, at, quantity)| Op::Putaway {
            task,
            at,
            quantity
        }),
        1 => (0i64..6, 1i64..10).prop_map(|(min, span)| Op::Level { min, span }),
        1 => (1i64..4).prop_map(|quantity| Op::TakeFromFace { quantity }),
        1 => Just(Op::Refill),
        1 => (0..NONE, [0i64..12, 0i64..12], -3i64..4, any::<bool>()).prop_map(
            |(at, counted, moved, approve)| Op::CountTask {
                at,
                counted,
                moved,
                approve
            }
        ),
    ]
}
