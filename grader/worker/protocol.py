"""Requests to the worker and strict validation of its answers (the trust boundary).

Everything read from the worker passes through here before the judge sees it: exact keys,
types, lengths and shapes; every number converted to a real float64. A malformed answer is an
``InvalidAnswer``, never a crash and never a pass.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any

import numpy as np

from grader.worker.sanitize import sanitize_message

STATUSES = {"missing", "error", "invalid"}
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class InvalidAnswer(Exception):
    """The worker's answer does not have the form the request asked for."""


def decode_array(obj: Any, what: str) -> np.ndarray:
    """``{"shape": [...], "data": [...]}`` to a float64 array; NaN/inf survive to be judged."""
    if not isinstance(obj, dict) or set(obj) != {"shape", "data"}:
        raise InvalidAnswer(f"{what}: not an array")
    dims, data = obj["shape"], obj["data"]
    if (
        not isinstance(dims, list)
        or len(dims) > 8
        or not all(type(d) is int and 0 <= d <= 1 << 20 for d in dims)
    ):
        raise InvalidAnswer(f"{what}: bad shape")
    if not isinstance(data, list) or len(data) != math.prod(dims):
        raise InvalidAnswer(
            f"{what}: {len(data) if isinstance(data, list) else '?'} numbers "
            f"for shape {tuple(dims)}"
        )
    numbers = []
    for x in data:
        if type(x) in (int, float):
            numbers.append(float(x))
        elif type(x) is str and x in _NON_FINITE:
            numbers.append(_NON_FINITE[x])
        else:
            raise InvalidAnswer(f"{what}: {sanitize_message(repr(x), 40)} is not a number")
    return np.asarray(numbers, dtype=np.float64).reshape(dims)


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


def field(result: dict[str, Any], key: str, kind: type) -> Any:
    """A required field of an ok result, of the given JSON type."""
    value = result.get(key)
    if not isinstance(value, kind):
        raise InvalidAnswer(f"the answer has no valid {key!r}")
    return value


def _is_run(run: Any) -> bool:
    return isinstance(run, list) and len(run) == 2 and all(type(n) is int for n in run)


def expand_runs(result: dict[str, Any], key: str, most: int) -> list[int]:
    """A field of ``[first, count]`` runs (``grader.worker.probes.walks.index_runs``) as the
    indices they stand for: ``first`` and the ``count - 1`` after it (-1, a node not the
    grader's, repeated). At most ``most`` indices, checked before any is made."""
    runs = field(result, key, list)
    if not all(_is_run(run) for run in runs):
        raise InvalidAnswer(f"{key!r} is not a list of [first, count] runs")
    if any(count < 1 or first < -1 for first, count in runs) or sum(c for _, c in runs) > most:
        raise InvalidAnswer(f"{key!r} has runs out of range")
    return [
        index
        for first, count in runs
        for index in ([-1] * count if first == -1 else range(first, first + count))
    ]
