"""Schemathesis hooks for test/fuzz/run.ts: real seat ids in hold bodies, real order ids in order paths.

Loaded through SCHEMATHESIS_HOOKS. The runner passes what it made in its setup:

  FUZZ_SEAT_IDS   comma-separated seat ids of the pinned event (available when the run started)
  FUZZ_ORDER_IDS  comma-separated order ids the fuzz buyer owns (optional)

Every substitution keeps the generated value's shape: only items that already are UUIDs are replaced,
distinct generated ids map to distinct real ones and equal ones to the same real one, so a list's
length, its duplicates and any non-UUID item stay as generated. Whatever a negative case violated it
still violates (and Schemathesis revalidates a case a hook changed, so its positive/negative label
stays true either way). Order ids the cell hands out in 202 answers to holds join the pool as the
run goes, so the order routes and DELETE .../hold act on orders that exist.
"""

import itertools
import os
import re

import schemathesis

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
HOLDS_PATH = "/events/{eventId}/holds"


def _ids(name):
    return [v for v in os.environ.get(name, "").split(",") if UUID.match(v)]


SEAT_IDS = _ids("FUZZ_SEAT_IDS")
ORDER_IDS = _ids("FUZZ_ORDER_IDS")
_seat_cursor = itertools.count()
_order_cursor = itertools.count()


def _is_uuid(value):
    return isinstance(value, str) and UUID.match(value) is not None


def _real_seats(items):
    """The list with each UUID item replaced by a real seat id, the rest untouched."""
    distinct = {}
    out = []
    for item in items:
        if _is_uuid(item):
            if item not in distinct:
                distinct[item] = SEAT_IDS[next(_seat_cursor) % len(SEAT_IDS)]
            out.append(distinct[item])
        else:
            out.append(item)
    # More distinct ids than real seats would collide; such a list is left as generated.
    return out if len(distinct) <= len(SEAT_IDS) else items


@schemathesis.hook
def map_case(context, case):
    path = case.operation.path
    if SEAT_IDS and path == HOLDS_PATH and case.method.upper() == "POST":
        body = case.body
        if isinstance(body, dict) and isinstance(body.get("seatIds"), list):
            case.body = {**body, "seatIds": _real_seats(body["seatIds"])}
    params = case.path_parameters
    if ORDER_IDS and isinstance(params, dict) and _is_uuid(params.get("orderId")):
        # One case in four keeps its random id, so an unknown order (404) is still asked for.
        n = next(_order_cursor)
        if n % 4 != 3:
            case.path_parameters = {**params, "orderId": ORDER_IDS[n % len(ORDER_IDS)]}
    return case


@schemathesis.hook
def after_call(context, case, response):
    if case.operation.path != HOLDS_PATH or response.status_code != 202:
        return
    try:
        order_id = response.json().get("orderId")
    except Exception:
        return
    if _is_uuid(order_id) and order_id not in ORDER_IDS:
        ORDER_IDS.append(order_id)
