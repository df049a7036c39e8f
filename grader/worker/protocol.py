"""Requests to the worker and strict validation of its replies' envelopes (the trust boundary).

Everything read from the worker passes through here, then through ``grader.worker.replies``,
before the judge sees it: exact keys, types, lengths and shapes; every number converted to a
real float64 (``grader.worker.answers``). A malformed answer is an ``InvalidAnswer``, never a
crash and never a pass.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from grader.sandbox.sanitize import sanitize_message

STATUSES = {"missing", "error", "invalid"}


class InvalidAnswer(Exception):
    """The worker's answer does not have the form the request asked for."""


class Probe(StrEnum):
    """The questions a check can put to the worker, each answered by the probe of that name
    (``grader.worker.probes.PROBES``; its module is named as the check's in ``grader.checks``).
    A member is its own string on the wire."""

    LOAD = "load"
    GRAPH = "graph"
    ROUTING = "routing"
    SUGAR = "sugar"
    ACCUMULATE = "accumulate"
    BROADCAST = "broadcast"
    OP = "op"
    TOPO = "topo"
    BACKWARD = "backward"
    ZERO_GRAD = "zero_grad"
    DEEP = "deep"
    TENSOR_BACKWARD = "tensor_backward"
    VARIABLE_TOPO = "variable_topo"
    BACKPROPAGATE = "backpropagate"
    CENTRAL_DIFFERENCE = "central_difference"


Request = tuple[str, str, dict[str, Any]]
"""One question a check puts to the worker: assignment, probe, case (plain JSON); ``request``
sends a batch of cases of one probe."""


def request(
    request_id: int, assignment: str, probe: str, cases: list[dict[str, Any]]
) -> dict[str, Any]:
    return {"id": request_id, "assignment": assignment, "probe": probe, "cases": cases}


def results(reply: Any, sent: dict[str, Any]) -> list[dict[str, Any]]:
    """Check the envelope of a reply: its id, one result per case, each ok or a known error."""
    if not isinstance(reply, dict) or set(reply) != {"id", "results"}:
        raise InvalidAnswer("the worker's reply is not an answer")
    if reply["id"] != sent["id"]:
        raise InvalidAnswer("the worker answered a different request")
    items = reply["results"]
    if not isinstance(items, list) or len(items) != len(sent["cases"]):
        raise InvalidAnswer("the worker's reply has the wrong number of results")
    checked = []
    for item in items:
        if isinstance(item, dict) and set(item) == {"ok"} and isinstance(item["ok"], dict):
            checked.append(item)
        elif isinstance(item, dict) and set(item) == {"error"}:
            checked.append({"error": _error(item["error"])})
        else:
            raise InvalidAnswer("a result is neither an answer nor an error")
    return checked


def _error(error: Any) -> dict[str, Any]:
    if not isinstance(error, dict) or error.get("status") not in STATUSES:
        raise InvalidAnswer("malformed error report")
    frames = error.get("frames", [])
    if not isinstance(frames, list):
        raise InvalidAnswer("malformed error report")
    return {
        "status": error["status"],
        "message": " ".join(sanitize_message(error.get("message", "")).split()),  # one line
        "frames": [sanitize_message(f, 200) for f in frames[:5]],
    }
