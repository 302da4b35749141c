//! The link's state, fed by hand: what it answers when.

use super::*;

const RESEND: Duration = Duration::from_secs(5);

fn link(now: Instant) -> LinkState {
    let me = Identity {
        topics: Topics {
            up: "up".into(),
            down: "down".into(),
            state: "state".into(),
        },
        session: "boot".into(),
        version: "1".into(),
        node: 1,
    };
    LinkState::new(me, 0, 100, RESEND, now)
}

fn facts(recover_after: Option<i64>) -> HelloFacts {
    HelloFacts {
        cursor: 0,
        head: Some(5),
        last: None,
        recover_after,
    }
}

fn ack(through: i64, hello: bool) -> Vec<u8> {
    message::encode(&DownMessage::Ack {
        session: "boot".into(),
        through_seq: through,
        gap: false,
        rejected: vec![],
        hello,
        hands_back: true,
    })
}

fn says(out: &[Do], pick: impl Fn(&Notice) -> bool) -> bool {
    out.iter().any(|d| matches!(d, Do::Say(n) if pick(n)))
}

/// Connected and greeted, with the log whole or not.
fn greeted(now: Instant, recover_after: Option<i64>) -> LinkState {
    let mut l = link(now);
    assert_eq!(
        l.connected(now)[..3],
        [Do::Subscribe, Do::SayOnline, Do::Hello]
    );
    let out = l.hello(facts(recover_after), now);
    assert!(matches!(
        out[..],
        [Do::Up(UpMessage::Hello(Hello { node: Some(1), .. }))]
    ));
    l
}

#[test]
fn nothing_goes_up_until_the_log_is_known_whole() {
    let now = Instant::now();
    let mut l = greeted(now, Some(2));
    assert!(l.tick(now).contains(&Do::Pump));
    assert_eq!(l.pump(5, now), vec![], "not before an answer");
    // A batch's ack while recovering is not news about this session.
    assert_eq!(l.message("down", &ack(1, false), now), vec![]);
    let out = l.message("down", &ack(4, true), now);
    let [Do::CheckRecovery(pending)] = &out[..] else {
        panic!("{out:?}")
    };
    // The cloud hands back first: nothing yet.
    assert_eq!(
        l.recovery_checked(pending.clone(), Some(false), now),
        vec![]
    );
    assert_eq!(l.pump(5, now), vec![]);
    let out = l.recovery_checked(pending.clone(), Some(true), now);
    assert!(says(&out, |n| matches!(
        n,
        Notice::Whole { cloud_cursor: 4 }
    )));
    assert!(out.contains(&Do::Prune { through: 4 }), "{out:?}");
    assert_eq!(l.pump(5, now), vec![Do::Send { from: 5, to: 5 }]);
}

#[test]
fn own_events_taken_back_end_recovery_as_an_answer_to_a_hello() {
    let now = Instant::now();
    let mut l = greeted(now, Some(0));
    let page = message::encode(&DownMessage::Recovered {
        after: 0,
        through: 3,
        events: vec![],
        more: false,
        session: Some("boot".into()),
    });
    // A page an earlier run of the box asked for is not this run's.
    let earlier = message::encode(&DownMessage::Recovered {
        after: 0,
        through: 9,
        events: vec![],
        more: false,
        session: Some("an earlier run".into()),
    });
    assert_eq!(
        l.message("down", &earlier, now),
        vec![Do::Say(Notice::PageIgnored {
            after: 0,
            session: Some("an earlier run".into())
        })]
    );
    assert!(matches!(
        l.message("down", &page, now)[..],
        [Do::TakeBack { through: 3, .. }]
    ));
    assert_eq!(l.took_back(TakenBack::More, now), vec![Do::Hello]);
    let out = l.took_back(TakenBack::Done { through: 3 }, now);
    assert_eq!(out, vec![Do::Prune { through: 3 }, Do::Pump]);
    assert!(!l.is_recovering());
    // A page that comes late is not taken.
    assert_eq!(
        l.message("down", &page, now),
        vec![Do::Say(Notice::PageIgnored {
            after: 0,
            session: Some("boot".into())
        })]
    );
}

#[test]
fn a_cloud_that_does_not_hand_back_is_said_once() {
    let now = Instant::now();
    let mut l = greeted(now, Some(0));
    let pending = PendingAck {
        session: "boot".into(),
        through: 9,
        gap: false,
        hello: true,
        hands_back: false,
        rejected: vec![],
    };
    let out = l.recovery_checked(pending.clone(), Some(false), now);
    assert!(says(&out, |n| matches!(
        n,
        Notice::Stalled { cloud_cursor: 9 }
    )));
    assert_eq!(l.recovery_checked(pending, Some(false), now), vec![]);
}

#[test]
fn silence_is_trouble_once_and_an_answer_ends_it() {
    let now = Instant::now();
    let mut l = greeted(now, None);
    let later = now + HELLO_RETRY;
    let out = l.tick(later);
    assert!(says(&out, |n| *n == Notice::NoAnswer) && out.contains(&Do::Hello));
    l.hello(facts(None), later);
    let silent = now + RESEND * 2;
    let out = l.tick(silent);
    assert!(
        out.iter().any(|d| matches!(d, Do::Record(Status::Trouble(Some(why))) if why.contains("has not answered this box's hello for 10 s"))),
        "{out:?}"
    );
    assert!(
        !says(&l.tick(silent), |n| matches!(n, Notice::Trouble(_))),
        "said once"
    );
    let out = l.message("down", &ack(0, true), silent);
    assert_eq!(
        out[..2],
        [
            Do::Say(Notice::AnswersAgain),
            Do::Record(Status::Trouble(None))
        ]
    );
}

#[test]
fn a_refusal_is_trouble_until_served_then_a_foreign_cloud() {
    let now = Instant::now();
    let mut l = greeted(now, None);
    let refused = message::encode(&DownMessage::Refused {
        reason: "not registered".into(),
    });
    let out = l.message("down", &refused, now);
    assert!(out.contains(&Do::Record(Status::Trouble(Some(
        "the cloud refuses this box: not registered".into()
    )))));
    assert_eq!(
        l.pump(5, now),
        vec![],
        "nothing goes to a cloud that refuses"
    );
    l.message("down", &ack(0, true), now);
    let out = l.message("down", &refused, now);
    assert!(
        says(&out, |n| matches!(n, Notice::ForeignRefusal(_))),
        "{out:?}"
    );
    assert_eq!(l.message("down", &refused, now), vec![], "said once");
}

#[test]
fn a_broker_that_stays_away_is_recorded_once_per_reason() {
    let now = Instant::now();
    let mut l = link(now);
    assert_eq!(l.disconnected("refused".into()).len(), 2);
    assert_eq!(l.disconnected("refused".into()), vec![]);
    assert_eq!(l.disconnected("timed out".into()).len(), 2);
    l.connected(now);
    let out = l.disconnected("timed out".into());
    assert!(says(&out, |n| matches!(n, Notice::LostBroker(_))));
}

#[test]
fn a_retained_online_on_connecting_asks_for_no_second_hello() {
    let now = Instant::now();
    let online = |s: &str| {
        message::encode(&StateMessage::Online {
            version: "1".into(),
            session: s.into(),
            head: None,
        })
    };
    let mut l = greeted(now, None);
    // The cloud's `online`, there before this connection: the hello just
    // said reaches it.
    assert_eq!(l.delivered(CLOUD_STATE, &online("c1"), true, now), vec![]);
    // Published while the hello waits: the cloud may only now have
    // subscribed, and missed it.
    assert!(
        l.delivered(CLOUD_STATE, &online("c1"), false, now)
            .contains(&Do::Hello)
    );
    l.message("down", &ack(0, true), now);
    // Answered: the same session again is no news, a new one is.
    assert_eq!(l.delivered(CLOUD_STATE, &online("c1"), false, now), vec![]);
    assert!(
        l.delivered(CLOUD_STATE, &online("c2"), false, now)
            .contains(&Do::Hello)
    );
    // Connected again: a retained `online` of a session not seen before
    // (the cloud restarted while the edge was away) is there before the
    // hello said on connecting too.
    l.disconnected("gone".into());
    assert!(l.connected(now).contains(&Do::Hello));
    l.hello(facts(None), now);
    assert_eq!(l.delivered(CLOUD_STATE, &online("c3"), true, now), vec![]);
    // Unanswered, it is said again all the same.
    let later = now + HELLO_RETRY;
    assert!(l.tick(later).contains(&Do::Hello));
}

#[test]
fn a_new_cloud_session_asks_for_a_hello_and_garbage_is_said() {
    let now = Instant::now();
    let mut l = greeted(now, None);
    l.message("down", &ack(0, true), now);
    let online = |s: &str| {
        message::encode(&StateMessage::Online {
            version: "1".into(),
            session: s.into(),
            head: None,
        })
    };
    assert!(
        l.message(CLOUD_STATE, &online("c1"), now)
            .contains(&Do::Hello)
    );
    assert_eq!(l.message(CLOUD_STATE, &online("c1"), now), vec![]);
    assert!(
        l.message(CLOUD_STATE, &online("c2"), now)
            .contains(&Do::Hello)
    );
    assert!(says(&l.message("down", b"{", now), |n| matches!(
        n,
        Notice::Malformed(_)
    )));
    assert_eq!(l.message("elsewhere", b"{", now), vec![]);
}
