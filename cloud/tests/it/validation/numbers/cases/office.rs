//! Pricing rules and jobs, contact forms, and numbers where text is expected
//! (printers, webhooks, messages, an order's status).

use super::super::{Fixture, Takes};
use super::{Case, case};
use depot_testkit::cloud::TestCloud;
use serde_json::json;

pub(super) fn cases(app: &TestCloud, f: &Fixture) -> Vec<Case> {
    use Takes::*;
    let b = app.a.business;
    let rules = format!("/v1/automation/{b}/items/pricing/rules");
    let forms = format!("/v1/contact/{b}/forms");
    let rule = json!({"origin_price_list_id": 1, "target_price_list_id": 2,
        "origin_action_id": "set_fixed", "origin_action_value": "1", "status": 0});
    vec![
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "position_id",
            Int(1, 2),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "origin_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "target_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "status",
            Int(0, 1),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            json!({"origin_price_list_id": 1, "target_price_list_id": 2, "type": "percentage", "value": 1, "status": 0}),
            "value",
            Decimal(4, -100.0, 1000.0),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            json!({"origin_price_list_id": 1, "target_price_list_id": 2, "type": "fixed", "value": 1, "status": 0}),
            "value",
            Decimal(2, -1e15, 1e15),
        ),
        case(
            "POST",
            format!("{rules}/create"),
            rule.clone(),
            "origin_action_value",
            AmountText(0, depot_protocol::Money::MAX.cents()),
        ),
        case(
            "PUT",
            format!("{rules}/{}/edit", f.rule),
            json!({"status": 0}),
            "status",
            Int(0, 1),
        ),
        case(
            "PUT",
            format!("{rules}/{}/edit", f.rule),
            json!({"position_id": 1}),
            "position_id",
            Int(1, 1),
        ),
        case(
            "PUT",
            format!("{rules}/{}/edit", f.rule),
            json!({"target_price_list_id": 2}),
            "target_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "PUT",
            format!("{rules}/position"),
            json!({"id": f.rule, "position_id": 1}),
            "position_id",
            Int(1, 1),
        ),
        case(
            "PUT",
            format!("{rules}/position"),
            json!({"id": f.rule, "position_id": 1}),
            "id",
            Id,
        ),
        case(
            "PUT",
            format!("{rules}/position"),
            json!({"positions": [{"id": f.rule, "position_id": 1}]}),
            "positions[0].position_id",
            Int(1, 1),
        ),
        case(
            "POST",
            format!("{rules}/jobs/execute"),
            json!({"rule_id": f.rule}),
            "rule_id",
            Id,
        ),
        case(
            "POST",
            format!("{rules}/jobs/execute"),
            json!({"rule_id": f.rule, "origin_price_list_id": 1}),
            "origin_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            format!("{rules}/jobs/execute"),
            json!({"rule_id": f.rule, "target_price_list_id": 2}),
            "target_price_list_id",
            Int(1, i64::MAX),
        ),
        case(
            "POST",
            forms.clone(),
            json!({"name": "F2", "department": "support", "max_per_email_per_hour": 1}),
            "max_per_email_per_hour",
            Int(1, 100),
        ),
        case(
            "POST",
            forms.clone(),
            json!({"name": "F2", "department": "support", "max_per_hour": 1}),
            "max_per_hour",
            Int(1, 10_000),
        ),
        case(
            "POST",
            forms.clone(),
            json!({"name": "F2", "department": "support", "max_links": 1}),
            "max_links",
            Int(0, 20),
        ),
        case(
            "POST",
            forms.clone(),
            json!({"name": "F2", "department": "support", "fields": [{"name": "order_ref", "max_length": 1}]}),
            "fields[0].max_length",
            Int(1, 2000),
        ),
        // No numbers in these bodies: a number where text is expected.
        case(
            "POST",
            format!("/v1/printers/{b}/create"),
            json!({"name": "P", "kind": "zpl", "connection": "tcp://10.0.0.6:9100"}),
            "name",
            Text,
        ),
        case(
            "PUT",
            format!("/v1/printers/{b}/{}/edit", f.printer),
            json!({"name": "P"}),
            "name",
            Text,
        ),
        case(
            "POST",
            format!("/v1/webhooks/{b}/create"),
            json!({"url": "https://hooks.example.com/x", "event_types": ["*"], "active": false}),
            "description",
            Text,
        ),
        case(
            "PUT",
            format!("/v1/webhooks/{b}/{}/edit", f.webhook),
            json!({"description": "d"}),
            "description",
            Text,
        ),
        case(
            "POST",
            format!("/v1/crm/{b}/threads/{}/message", f.thread),
            json!({"body": "hi"}),
            "body",
            Text,
        ),
        case(
            "PUT",
            format!("/v1/orders/{b}/{}/status", f.packable),
            json!({"status": "cancelled"}),
            "status",
            Text,
        ),
    ]
}
