"""A warehouse day through a client generated from the served description
(openapi-python-client), as a client developer would write it: receive,
wave, scan, pack, label, dispatch, track. Every answer is read through the
generated models, so an answer the description does not describe fails
here.

usage: day.py CLIENT_DIR CLOUD_URL BUSINESS_ID API_KEY CARRIER_SECRET
"""

import hashlib
import hmac
import json
import sys
import time
import uuid
from datetime import datetime, timezone

client_dir, base, business, key, carrier_secret = sys.argv[1:6]
business = int(business)
sys.path.insert(0, client_dir)

from depot_client import AuthenticatedClient, Client  # noqa: E402
from depot_client.api.inbounds import inbounds_list, inbounds_reception  # noqa: E402
from depot_client.api.orders import orders_get  # noqa: E402
from depot_client.api.outbounds import outbounds_close, outbounds_manifest  # noqa: E402
from depot_client.api.packing import packing_pack_order  # noqa: E402
from depot_client.api.picking import picking_create, picking_get, picking_scan  # noqa: E402
from depot_client.api.shipments import shipments_generate_label  # noqa: E402
from depot_client.api.tracking import tracking_carrier_webhook, tracking_track  # noqa: E402
from depot_client.models import (  # noqa: E402
    CarrierEvent,
    ErrorBody,
    LabelFormat,
    LabelRequest,
    Milestone,
    PackItem,
    PackRequest,
    PackageIn,
    ReceptionLine,
    ReceptionRequest,
    ScanRequest,
    WaveCreate,
)

api = AuthenticatedClient(base_url=base, token=key, prefix="", auth_header_name="X-API-KEY",
                          raise_on_unexpected_status=True)
public = Client(base_url=base, raise_on_unexpected_status=True)


def ok(step, response):
    """The parsed answer of a 2xx, or the step fails naming the answer."""
    parsed = response.parsed
    if response.status_code // 100 != 2 or parsed is None or isinstance(parsed, ErrorBody):
        sys.exit(f"{step}: {response.status_code} {response.content[:500]!r}")
    print(f"ok  {step}")
    return parsed


def key_():
    return str(uuid.uuid4())


# 1. Receive the purchase order by scan, one unit rejected at inspection.
inbounds = ok("list inbound orders", inbounds_list.sync_detailed(business, client=api))
po = next(o for o in inbounds.data if o.reference == "PO-DEMO-1")
received = ok("receive PO-DEMO-1", inbounds_reception.sync_detailed(
    business, client=api, idempotency_key=key_(),
    body=ReceptionRequest(inbound_id=po.id, location="DOCK-1", lines=[
        ReceptionLine(code="DEMO-001", quantity=24),
        ReceptionLine(code="DEMO-002", accepted=11, rejected=1, reason="crushed box"),
    ])))
print("    inbound", received.data.order.status)

# 2. Wave the oldest confirmed order.
wave = ok("create a wave", picking_create.sync_detailed(
    business, client=api, idempotency_key=key_(), body=WaveCreate(warehouse_id=1, max_orders=1))).data
wave = ok("read the wave", picking_get.sync_detailed(business, wave.id, client=api)).data
lines = [line for pick_list in wave.pick_lists for line in pick_list.lines]
assert lines, "the wave has lines to pick"

# 3. Scan every line.
for line in lines:
    scan = ok(f"scan {line.sku}", picking_scan.sync_detailed(
        business, client=api, idempotency_key=key_(),
        body=ScanRequest(wave_id=wave.id, order_id=line.order_id, code=line.sku, quantity=line.quantity)))
order_id = wave.pick_lists[0].order_id

# 4. Pack it: the scanned items, in one parcel.
order = ok("read the order", orders_get.sync_detailed(business, order_id, client=api)).data
packed = ok("pack the order", packing_pack_order.sync_detailed(
    business, client=api, idempotency_key=key_(),
    body=PackRequest(order_id=order_id, items=[PackItem(code=l.sku, quantity=l.quantity) for l in order.lines],
                     packages=[PackageIn(weight_g=1200)]))).data
shipment = packed.shipment
print("    tracking number", shipment.tracking_number)

# 5. The label, as a PDF.
label = shipments_generate_label.sync_detailed(
    business, client=api, idempotency_key=key_(),
    body=LabelRequest(shipment_id=shipment.id, format_=LabelFormat.PDF, package=1))
if label.status_code != 200 or not label.content.startswith(b"%PDF-"):
    sys.exit(f"label: {label.status_code} {label.content[:200]!r}")
print("ok  label", len(label.content), "bytes of PDF")

# 6. Close the carrier's dispatch run, and fetch its manifest.
run = ok("close the dispatch run", outbounds_close.sync_detailed(
    business, shipment.dispatch_run_id, client=api, idempotency_key=key_())).data
print("    run", run.status)
manifest = outbounds_manifest.sync_detailed(business, shipment.dispatch_run_id, client=api)
if manifest.status_code != 200 or not manifest.content.startswith(b"%PDF-"):
    sys.exit(f"manifest: {manifest.status_code} {manifest.content[:200]!r}")
print("ok  manifest", len(manifest.content), "bytes of PDF")

# 7. The carrier reports the delivery, signed (HMAC-SHA256 over
# "<timestamp>.<body>", the body as sent).
event = CarrierEvent(event_id=f"evt-{uuid.uuid4()}", tracking_number=shipment.tracking_number,
                     milestone=Milestone.DELIVERED, at=datetime.now(timezone.utc), city="Madrid")
body = json.dumps(event.to_dict()).encode()
stamp = str(int(time.time()))
signature = hmac.new(carrier_secret.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
raw = public.get_httpx_client().post(
    "/v1/webhooks/carriers/own", content=body,
    headers={"Content-Type": "application/json", "X-Depot-Signature": f"t={stamp},v1={signature}"})
if raw.status_code != 200:
    sys.exit(f"carrier event: {raw.status_code} {raw.text[:500]}")
print("ok  carrier event")

# 8. Public tracking, without a key.
tracking = ok("track the parcel", tracking_track.sync_detailed(shipment.tracking_number, client=public)).data
milestones = [m.milestone.value for m in tracking.milestones]
if tracking.status.value != "delivered" or "delivered" not in milestones:
    sys.exit(f"tracking: {tracking.status.value} {milestones}")
print("    status", tracking.status.value, "milestones", milestones)
print("the warehouse day ran through the generated client")
