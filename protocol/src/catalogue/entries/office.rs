//! Documents, release notes, CRM and pricing.

use super::f;
use crate::catalogue::Audience::{Business, Internal};
use crate::catalogue::Presence::{Optional, Required};
use crate::catalogue::Replication;
use crate::catalogue::Source::Cloud;
use crate::catalogue::Ty::{Array, Integer, Object, String, Timestamp};
use crate::catalogue::{EventType, Payload, record};
use crate::crm::contact::{ContactForm, Department};
use crate::document::Document;
use crate::event::EventKind;
use crate::release::Release;

pub const DOCUMENT_ATTACHED: EventType = EventType {
    kind: EventKind::DocumentAttached,
    replication: Replication::Recorded,
    version: 1,
    summary: "A document was attached to an order, shipment, item or inbound.",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: record::<Document>(&[]),
};

pub const RELEASE_PUBLISHED: EventType = EventType {
    kind: EventKind::ReleasePublished,
    replication: Replication::Everywhere,
    version: 1,
    summary: "Release notes were published (every edge keeps them).",
    source: Cloud,
    audience: Internal,
    refs: &[],
    payload: record::<Release>(&[]),
};

pub const RELEASE_TRANSLATED: EventType = EventType {
    kind: EventKind::ReleaseTranslated,
    replication: Replication::Everywhere,
    version: 1,
    summary: "A locale's notes were added to a published release.",
    source: Cloud,
    audience: Internal,
    refs: &[],
    payload: Payload::Fields(&[
        f("release_id", Integer, Required, "The release."),
        f("product", String, Required, "edge or cloud."),
        f("version", String, Required, "The release's version."),
        f("locale", String, Required, "The locale added."),
        f("note", Object, Required, "The notes in that locale."),
        f("updated_at", Timestamp, Required, "When."),
    ]),
};

pub const CRM_DEPARTMENT_SAVED: EventType = EventType {
    kind: EventKind::CrmDepartmentSaved,
    replication: Replication::Local,
    version: 1,
    summary: "A contact department was created or edited (cloud only).",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: record::<Department>(&[]),
};

pub const CRM_FORM_SAVED: EventType = EventType {
    kind: EventKind::CrmFormSaved,
    replication: Replication::Local,
    version: 1,
    summary: "A contact form was created or edited (cloud only).",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: record::<ContactForm>(&[]),
};

pub const CRM_THREAD_OPENED: EventType = EventType {
    kind: EventKind::CrmThreadOpened,
    replication: Replication::Local,
    version: 1,
    summary: "A contact form opened a customer thread with its first message.",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        f("thread", Object, Required, "The thread (Thread)."),
        f("message", Object, Required, "Its first message (Message)."),
    ]),
};

pub const CRM_MESSAGE_POSTED: EventType = EventType {
    kind: EventKind::CrmMessagePosted,
    replication: Replication::Local,
    version: 1,
    summary: "A message was added to a customer thread.",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        f("thread_id", Integer, Required, "The thread."),
        f("message", Object, Required, "The message (Message)."),
    ]),
};

pub const PRICING_RULES_CHANGED: EventType = EventType {
    kind: EventKind::PricingRulesChanged,
    replication: Replication::Local,
    version: 1,
    summary: "A pricing rule was created, edited, deleted or moved (cloud only).",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        f(
            "change",
            String,
            Required,
            "created, edited, deleted or moved.",
        ),
        f("rule", Object, Optional, "The rule, for all but moves."),
        f(
            "positions",
            Array,
            Optional,
            "For moves: each rule's new position.",
        ),
    ]),
};

pub const PRICING_JOB_EXECUTED: EventType = EventType {
    kind: EventKind::PricingJobExecuted,
    replication: Replication::Local,
    version: 1,
    summary: "A pricing job ran; the prices it changed are `item.updated` events.",
    source: Cloud,
    audience: Business,
    refs: &[],
    payload: Payload::Fields(&[
        f("job_id", String, Required, "The job's key."),
        f(
            "rules",
            Array,
            Required,
            "Per rule: rule_id, items_matched, items_changed, items_skipped.",
        ),
    ]),
};
