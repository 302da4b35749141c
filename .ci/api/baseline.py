"""Writes baseline-<api>.json: the findings Schemathesis may report that are
not faults, each with why. Run it after editing the lists below; CI reads
only the JSON.

Every entry is a request valid by its schema that breaks a rule JSON Schema
cannot state: a record that must exist (a warehouse, a SKU, a department),
a rule between fields (quantity = accepted + rejected), or the state of a
record (an order confirmed needs a complete address). Refusing those is
the server's job, answered 422 naming the field, so the finding is known;
a 5xx, a broken answer schema or an undocumented status is never here.
"""

import json
from pathlib import Path

REFUSED = ("positive_data_acceptance", "RejectedPositiveData", "422")

COMMON = {
    "POST /v1/inbounds/{business_id}/reception": "quantity must equal accepted + rejected, a reason is needed when units are rejected, codes must be lines of the inbound order, and location a location of its warehouse",
    "POST /v1/inventory/{business_id}/adjust": "item_id or sku must name an existing item of the business, and location and to_location locations of their warehouses (which fields each reason takes is described)",
    "POST /v1/locations/{business_id}/create": "warehouse_id must be a warehouse of the business",
    "POST /v1/counts/{business_id}/create": "warehouse_id must be a warehouse of the business, exactly one of locations, zone, item_ids or not_counted_days says what to count, and what it names must exist there",
    "POST /v1/counts/{business_id}/{count_id}/scan": "the location must be one of the count's and the code an item (one of the count's items, when it counts items)",
    "PUT /v1/replenishment/{business_id}/levels": "warehouse_id, location (a pick location of it) and item_id must exist in the business, and min be less than max",
    "POST /v1/replenishment/{business_id}/scan": "the code must be the task's item and lot, and the location its pick location",
    "POST /v1/returns/{business_id}/create": "order_id must be a dispatched or delivered order of the business, and each line one of its lines with units left to return",
    "POST /v1/returns/{business_id}/{return_id}/receive": "the code must be an item on the return with units left to grade, and a lot-tracked item's units going to stock need their lot",
    "POST /v1/putaway/{business_id}/scan": "the code must be the task's item and lot, and the location one of its warehouse that takes the goods",
    "PUT /v1/locations/{business_id}/{location_id}/edit": "warehouse_id and code may only repeat what the location has",
    "POST /v1/packing/{business_id}/pack-order": "the items must be the order's (that a package's dimensions come together is described)",
    "POST /v1/picking/{business_id}/waves/create": "warehouse_id must be a warehouse of the business",
    "POST /v1/picking/{business_id}/item/scan": "the code must be on the wave's pick list",
    "POST /v1/printers/jobs/{business_id}/{printer_id}": "the raw body must be a ZPL (^XA…) or PDF (%PDF-…) document, which a binary schema cannot say",
    "PUT /v1/orders/{business_id}/{order_id}/status": "whether a status can follow depends on the order's state (confirming needs a complete address)",
    "POST /v1/orders/{business_id}/create": "each line's sku must be an item of the catalogue",
    "POST /v1/inbounds/{business_id}/orders/create": "warehouse_id and each line's sku must exist",
    "POST /v1/outbounds/{business_id}/dispatch-runs/{run_id}/load": "the code must be a package of the run's shipments",
    "POST /v1/shipments/{business_id}/generate-label": "the package number must be one of the shipment's packages",
}

# A list's `cursor` is one its own answer gave: any other string the
# schema allows (a made-up one, another list's) is refused naming it.
CURSOR_WHY = "cursor must be one this list's answer gave (opaque); any other string is refused naming it"
CURSOR_LISTS = [
    "GET /v1/inventory/{business_id}/items/list",
    "GET /v1/picking/{business_id}/waves/list",
    "GET /v1/channels/{business_id}/list",
    "GET /v1/channels/{business_id}/{channel}/availability",
    "GET /v1/counts/{business_id}/list",
    "GET /v1/items/{business_id}/list",
    "GET /v1/replenishment/{business_id}/tasks/list",
    "GET /v1/shipments/{business_id}/list",
    "GET /v1/locations/{business_id}/list",
    "GET /v1/putaway/{business_id}/tasks/list",
    "GET /v1/returns/{business_id}/list",
    "GET /v1/outbounds/{business_id}/dispatch-runs",
    "GET /v1/orders/{business_id}/list",
    "GET /v1/inbounds/{business_id}/orders/list",
    "GET /v1/crm/{business_id}/threads/list",
    "GET /v1/conflicts/{business_id}/list",
]
for route in CURSOR_LISTS:
    COMMON.setdefault(route, CURSOR_WHY)

CLOUD_ONLY = {
    "POST /v1/channels/{business_id}/create": "warehouse_ids must be warehouses of the business, and code a word the routes do not take",
    "PUT /v1/channels/{business_id}/{channel}/edit": "code may only repeat the channel's own, and warehouse_ids must be warehouses of the business",
    "PUT /v1/channels/{business_id}/{channel}/connector": "the URL must reach a public https address, a new connector needs its token, and a user comes with its password",
    "GET /v1/buyers/{business_id}/find/{key_type}": "key_id's rule depends on key_type (by_id: a positive integer; by_name: 2 characters or more; by_wildcard: a pattern)",
    "POST /v1/contact/{business_id}/forms": "department must be a department of the business",
    "POST /v1/contact/{business_id}/{form_id}": "fields must be the form's own fields",
    "POST /v1/documents/{business_id}/{entity_type}/{entity_id}": "category must be one of the business's document categories",
    "POST /v1/items/{business_id}/create": "a GTIN's check digit, and price lists that exist",
    "PUT /v1/items/{business_id}/{item_id}/edit": "a GTIN's check digit, and price lists that exist",
    "POST /v1/webhooks/{business_id}/create": "the URL must reach a public https address (the event types a subscription may name are described)",
    "PUT /v1/webhooks/{business_id}/{webhook_id}/edit": "the URL must reach a public https address (the event types a subscription may name are described)",
    "POST /v1/printers/{business_id}/create": "connection must name a reachable device form (host, port, baud) beyond what its pattern says",
    "PUT /v1/printers/{business_id}/{printer_id}/edit": "connection must name a reachable device form (host, port, baud) beyond what its pattern says",
}

# The specification answers a pricing request it refuses with 201 and
# {fieldErrors} (product specification, pricing rules), so a refused
# request looks accepted.
PRICING = {
    "DELETE /v1/automation/{business_id}/items/pricing/rules/{rule_id}/delete",
    "POST /v1/automation/{business_id}/items/pricing/rules/create",
    "PUT /v1/automation/{business_id}/items/pricing/rules/{rule_id}/edit",
    "PUT /v1/automation/{business_id}/items/pricing/rules/position",
    "POST /v1/automation/{business_id}/items/pricing/rules/jobs/execute",
}
PRICING_WHY = "the specification answers a refused pricing request 201 with {fieldErrors}"

# A contact form answers a filled honeypot field (`website`) as received,
# whatever else the body holds, and keeps nothing: a bot learns nothing from
# it, not even which of its fields were wrong.
HONEYPOT = {"POST /v1/contact/{business_id}/{form_id}"}
HONEYPOT_WHY = "a filled honeypot (website) is answered 200 as received whatever else the body holds, and nothing is kept, so a bot learns nothing from the answer"

EDGE_ONLY = {
    ("GET /v1/edge/scales/{scale_id}/weight", "not_a_server_error", "ServerError", "504"): "504 is the documented answer when the weight does not settle within the caller's own timeout_ms (the fuzzer asks for 1 ms)",
}

RELEASES = {
    "POST /api/releases": "notes must be in locales the service offers, and default_locale is required when notes has more than one",
}


def entry(operation, check, failure, signature, why):
    return {"operation": operation, "check": check, "failure": failure, "signature": signature, "why": why}


def refused(table):
    return [entry(op, *REFUSED, why) for op, why in table.items()]


def write(name, entries):
    doc = {"format_version": 1, "entries": sorted(entries, key=lambda e: (e["operation"], e["check"]))}
    Path(__file__).with_name(f"baseline-{name}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


pricing = [entry(op, "negative_data_rejection", "AcceptedNegativeData", "201", PRICING_WHY) for op in sorted(PRICING)]
honeypot = [entry(op, "negative_data_rejection", "AcceptedNegativeData", "200", HONEYPOT_WHY) for op in sorted(HONEYPOT)]
write("cloud", refused(COMMON) + refused(CLOUD_ONLY) + pricing + honeypot)
write("edge", refused(COMMON) + [entry(*k, why) for k, why in EDGE_ONLY.items()])
write("release-notes", refused(RELEASES))
