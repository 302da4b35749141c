"""Schemathesis hooks for Depot's APIs (loaded through SCHEMATHESIS_HOOKS).

An Idempotency-Key names one request: the servers answer a second,
different request with the same key 422 (or 409 while the first is under
way), as the description says. A generator that draws keys from the
header's schema sends the same few values ("0", "a") for different
requests, which is a client breaking that rule, and the key's answer then
hides what the request was testing (a missing signature, a wrong method).
So a request meant to be valid, and any request whose drawn key is valid
everywhere, gets a fresh key, as a real client's would be: the request
stays exactly as valid or invalid as it was drawn. A key that is itself
the invalid part of a request is left as drawn.
"""

import re
import uuid

import schemathesis
from schemathesis import GenerationMode

HEADER = "idempotency-key"
# Valid on every route: the pricing job routes take the strictest keys
# (1 to 100 of A-Z a-z 0-9 - _ . : ~), the others any 1 to 255 printable
# ASCII characters.
VALID_EVERYWHERE = re.compile(r"[A-Za-z0-9._:~-]{1,100}")


@schemathesis.hook
def before_call(context, case, **kwargs):
    headers = case.headers or {}
    meta = case.meta
    positive = meta is not None and meta.generation.mode == GenerationMode.POSITIVE
    for name, value in list(headers.items()):
        if name.lower() != HEADER:
            continue
        if positive or (isinstance(value, str) and VALID_EVERYWHERE.fullmatch(value)):
            headers[name] = str(uuid.uuid4())
