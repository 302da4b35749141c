"""Schemathesis hooks for Depot's APIs (loaded through SCHEMATHESIS_HOOKS).

An Idempotency-Key names one request: the servers answer a second,
different request with the same key with 422 (or 409 while the first is
under way), as the description says. A generator that draws keys from the
header's schema sends the same few values for different requests, which is
a client breaking that rule, not the server rejecting valid data. So every
request that is meant to be valid gets a fresh key, as a real client's
would be; requests meant to be invalid keep what was drawn.
"""

import uuid

import schemathesis
from schemathesis import GenerationMode

HEADER = "Idempotency-Key"


@schemathesis.hook
def before_call(context, case, **kwargs):
    headers = case.headers or {}
    key = next((k for k in headers if k.lower() == HEADER.lower()), None)
    if key is None:
        return
    meta = case.meta
    if meta is not None and meta.generation.mode != GenerationMode.POSITIVE:
        return
    headers[key] = str(uuid.uuid4())
