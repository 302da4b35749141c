//! What stands in the way of sync, said on the box's status and in its
//! log: why the broker cannot be reached (once per change of reason, not
//! at every retry), and, while connected, a subscription the broker
//! refused, a cloud that does not answer, or one that refuses this box.

use super::Link;
use depot_protocol::sync::topic::CLOUD_STATE;

impl Link {
    pub(super) async fn disconnected(&mut self, reason: String) {
        if self.outbox.is_connected() {
            tracing::warn!(reason, "lost the broker; the outbox keeps everything");
            self.outbox.disconnected();
        } else if self.last_failure.as_deref() != Some(reason.as_str()) {
            tracing::warn!(
                reason,
                "cannot connect to the broker; the floor works offline meanwhile"
            );
        } else {
            return;
        }
        if let Err(e) = self.wms.set_link_down(reason.clone()).await {
            tracing::warn!(error = %e, "could not record the link state");
        }
        self.last_failure = Some(reason);
    }

    /// Connected, but sync cannot go on: says why on the status, once
    /// per reason.
    pub(super) async fn trouble(&mut self, why: String) {
        if self.trouble_said.as_deref() == Some(why.as_str()) {
            return;
        }
        tracing::warn!(reason = %why, "connected to the broker, but not syncing");
        self.trouble_said = Some(why.clone());
        self.say_trouble(Some(why)).await;
    }

    /// The cloud hears this box but does not serve it (not registered, or
    /// registered as another node). Once a cloud has served this box, a
    /// refusal comes from another cloud on the same broker, with a
    /// database of its own: worth a line in the log, not the box's status.
    pub(super) async fn refused(&mut self, reason: String) {
        if !self.outbox.is_served() {
            return self
                .trouble(format!("the cloud refuses this box: {reason}"))
                .await;
        }
        if !std::mem::replace(&mut self.foreign_refusal_said, true) {
            tracing::warn!(
                %reason,
                "a cloud refused this box after another served it: is a second depot-cloud, with a database of its own, on this broker?"
            );
        }
    }

    pub(super) async fn say_trouble(&self, why: Option<String>) {
        if let Err(e) = self.wms.set_link_trouble(why).await {
            tracing::warn!(error = %e, "could not record the link state");
        }
    }

    /// The broker refused to let this box subscribe: nothing from the cloud
    /// can arrive.
    pub(super) async fn subscription_refused(&mut self) {
        let why = format!(
            "the broker refused this box's subscription to {} or {CLOUD_STATE}: its access rules must let this box's broker user subscribe to both, and publish to {} and {}",
            self.topics.down, self.topics.up, self.topics.state
        );
        self.trouble(why).await;
    }

    /// Hellos unanswered for longer than the limit: the cloud is down or not
    /// on this broker, or the broker's rules drop what this box publishes
    /// (MQTT 3.1.1 has no way to say a publish was refused).
    pub(super) async fn check_silence(&mut self) {
        let Some(since) = self.unanswered_since else {
            return;
        };
        if !self.outbox.is_connected() || since.elapsed() < self.silence_limit {
            return;
        }
        let why = format!(
            "connected to the broker, but the cloud has not answered this box's hello for {} s: is depot-cloud running and connected to this broker, and do the broker's access rules let this box publish to {} and subscribe to {}?",
            self.silence_limit.as_secs(),
            self.topics.up,
            self.topics.down
        );
        self.trouble(why).await;
    }
}
