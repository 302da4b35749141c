//! `docs/events.md`, written from the catalogue (a test keeps the
//! committed file equal to this).

use super::{Audience, CATALOGUE, EventType, Field, Payload, Presence, Ty};
use std::fmt::Write;

const PREAMBLE: &str = "\
# Events

<!-- Generated from protocol/src/catalogue: a test fails when this file
     and the catalogue differ, and with DEPOT_BLESS=1 rewrites it:
     DEPOT_BLESS=1 cargo test -p depot-protocol --test events_doc -->

Every change Depot makes is an event in the log of the node that made it,
replicated to the others. The events a business may receive are listed
here, by type. They reach clients through:

- **Websockets**: `GET /v1/events/{business_id}/stream` on the edge and in
  the cloud; frames `{\"events\": [Event, ...], \"next\": seq}`; resume
  with `after=<seq>` and miss nothing. Filters: `kinds`
  (`order.status_changed,pick.*`), `warehouse_id`, `station`.
- **Long polling**: `GET /v1/events/{business_id}/list?after=&wait=`.
- **Webhooks** (cloud): signed POSTs to the URLs a business subscribes,
  retried until they are taken (docs/webhooks.md).

Each event:

| Field | Type | |
|---|---|---|
| `seq` | integer | Position in this node's log: what `after=` takes. |
| `id` | string | The event's id, the same on every node. |
| `origin` | string | The node that wrote it: `cloud` or `edge:<id>`. |
| `business_id` | integer | The business. |
| `kind` | string | The event type, below. |
| `version` | integer | The version of the payload's shape. |
| `payload` | object | As documented per type. |
| `at` | string | When it was written (RFC 3339). |

**Versions.** A new field keeps the version: ignore fields you do not know.
A field removed, renamed or changed in meaning raises the version, and
`version` says which one an event carries.

The machine-readable form is the AsyncAPI document at `/v1/asyncapi.json`.
";

fn ty(f: &Field) -> String {
    let base = match f.ty {
        Ty::String => "string",
        Ty::Integer => "integer",
        Ty::Boolean => "boolean",
        Ty::Object => "object",
        Ty::Array => "array",
        Ty::Timestamp => "timestamp",
        Ty::Date => "date",
    };
    match f.presence {
        Presence::Required => base.to_owned(),
        Presence::Nullable => format!("{base} or null"),
        Presence::Optional => format!("{base}, optional"),
    }
}

fn table(out: &mut String, fields: &[Field]) {
    out.push_str("| Field | Type | |\n|---|---|---|\n");
    for f in fields {
        let _ = writeln!(out, "| `{}` | {} | {} |", f.name, ty(f), f.doc);
    }
}

fn entry(out: &mut String, t: &EventType) {
    let _ = writeln!(out, "### `{}` (version {})\n", t.name(), t.version);
    let _ = writeln!(out, "{}\n", t.summary);
    let _ = writeln!(
        out,
        "Written by: {}. Sync: {}.\n",
        t.source.as_str(),
        t.replication.as_str()
    );
    if !t.refs.is_empty() {
        let refs: Vec<String> = t
            .refs
            .iter()
            .map(|r| {
                format!(
                    "`{}` ({})",
                    r.path.trim_start_matches('/'),
                    r.entity.as_str()
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "References, checked to belong to the sender's business before a node \
             applies it from another: {}.\n",
            refs.join(", ")
        );
    }
    match t.payload {
        Payload::Record { name, extra, .. } => {
            let _ = writeln!(
                out,
                "Payload: the `{}` record, as the API answers it{}\n",
                name(),
                if extra.is_empty() { "." } else { ", and:" }
            );
            if !extra.is_empty() {
                table(out, extra);
                out.push('\n');
            }
        }
        Payload::Fields(fields) => {
            out.push_str("Payload:\n\n");
            table(out, fields);
            out.push('\n');
        }
    }
}

/// The whole document.
pub fn document() -> String {
    let mut out = String::from(PREAMBLE);
    out.push_str("\n## Types\n\n");
    let mut families: Vec<&str> = Vec::new();
    for t in super::public() {
        let family = t.name().split('.').next().unwrap_or(t.name());
        if !families.contains(&family) {
            families.push(family);
        }
    }
    for family in families {
        let names: Vec<String> = super::public()
            .filter(|t| t.name().split('.').next() == Some(family))
            .map(|t| format!("`{}`", t.name()))
            .collect();
        let _ = writeln!(out, "- **{family}**: {}", names.join(", "));
    }
    out.push('\n');
    for t in super::public() {
        entry(&mut out, t);
    }
    out.push_str(
        "## Not delivered to clients\n\n\
         These travel between nodes only: they carry key hashes or concern no \
         single business.\n\n",
    );
    for t in CATALOGUE
        .iter()
        .filter(|t| t.audience == Audience::Internal)
    {
        let _ = writeln!(out, "- `{}`: {}", t.name(), t.summary);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_every_public_type_once() {
        let doc = super::document();
        for t in super::super::public() {
            let heading = format!("### `{}` (version {})", t.name(), t.version);
            assert_eq!(doc.matches(&heading).count(), 1, "{heading}");
        }
        assert!(!doc.contains("### `key.created`"));
        assert!(doc.contains("- `key.created`:"));
        assert!(doc.contains("| `wave_remaining` | integer | Left in the whole wave. |"));
    }
}
