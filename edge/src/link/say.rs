//! What the link's state has to say, in the box's log: the state decides
//! when (once per reason, not at every retry), this says it at the level
//! it deserves.

use depot_protocol::sync::link::Notice;

pub(super) fn say(notice: &Notice) {
    match notice {
        Notice::Connected { acked } => tracing::info!(acked, "connected to the broker"),
        Notice::LostBroker(reason) => {
            tracing::warn!(reason, "lost the broker; the outbox keeps everything");
        }
        Notice::Unreachable(reason) => tracing::warn!(
            reason,
            "cannot connect to the broker; the floor works offline meanwhile"
        ),
        Notice::CloudOnline(session) => {
            tracing::info!(%session, "the cloud is online: saying hello");
        }
        Notice::NoAnswer => tracing::info!("no answer to hello: saying it again"),
        Notice::AnswersAgain => tracing::info!("the cloud answers again"),
        Notice::Trouble(why) => {
            tracing::warn!(reason = %why, "connected to the broker, but not syncing");
        }
        Notice::ForeignRefusal(reason) => tracing::warn!(
            %reason,
            "a cloud refused this box after another served it: is a second depot-cloud, with a database of its own, on this broker?"
        ),
        Notice::Malformed(e) => {
            tracing::warn!(error = %e, "ignored a malformed message from the cloud")
        }
        Notice::Stalled { cloud_cursor } => {
            tracing::error!(cloud_cursor, "{}", depot_wms::recovery::STALLED);
        }
        Notice::Whole { cloud_cursor } => {
            tracing::info!(cloud_cursor, "the cloud holds nothing this log lacks");
        }
        Notice::Rejected(r) => {
            tracing::warn!(seq = r.seq, id = %r.id, reason = %r.reason, "the cloud rejected an event");
        }
        Notice::Rewound {
            acknowledged,
            cloud_has,
        } => tracing::warn!(
            acknowledged,
            cloud_has,
            "the cloud has less than it acknowledged (restored from a backup?): sending the rest again"
        ),
        Notice::Reset(reason) => tracing::warn!(
            %reason,
            "the cloud cannot serve this edge from its cursor: reloading its changes from the start"
        ),
        Notice::PageIgnored { after, session } => tracing::info!(
            after,
            session = session.as_deref().unwrap_or("none"),
            "a page of this box's own events not asked for in this run: ignored"
        ),
    }
}
