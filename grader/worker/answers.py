"""The pieces a worker's answers are made of, decoded: numbers and arrays, fields, runs of
indices, reported changes, records.

``grader.worker.replies`` decodes each probe's answer from these, once, where it arrives; the
checks judge what comes out. Every piece is checked strictly (``protocol.InvalidAnswer`` if it
is not what the probe sends); no shape is checked against what a check expects: an array of the
wrong shape is a wrong answer (``mismatch`` says ``expected shape X, got shape Y``, and a
gradient left unsummed by broadcasting is a named bug), never an invalid one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.language.graphs import MICROGRAD_PRIMITIVES, OPS, param_from_json
from grader.language.verdicts import show
from grader.sandbox.sanitize import sanitize_message
from grader.worker.probes.untouched import MAX_REPORTED, OUT_GRAD
from grader.worker.protocol import InvalidAnswer
from grader.worker.recording import MAX_NODES

_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


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


Arrays = tuple[np.ndarray | None, ...]
"""Arrays named one per node (a missing gradient is None)."""


def arrays(answer: dict[str, Any], key: str, labels: list[str]) -> Arrays:
    """The arrays of ``answer[key]``, one per label, each named by its label where it is not
    one."""
    items = field(answer, key, list)
    if len(items) != len(labels):
        raise InvalidAnswer(f"{len(items)} {key} for {len(labels)} nodes")
    return tuple(
        None if item is None else decode_array(item, label)
        for item, label in zip(items, labels, strict=True)
    )


def ints(answer: dict[str, Any], key: str, problem: str) -> tuple[int, ...]:
    """A list of ints; ``problem`` says what is wrong where an entry is no int."""
    items = field(answer, key, list)
    if not all(type(i) is int for i in items):
        raise InvalidAnswer(problem)
    return tuple(items)


def optional_ints(value: Any) -> tuple[int, ...] | None:
    """A list of ints a probe sends on request only (counts of reads, a result's inputs);
    None where it is absent or not one: the check that asked says what that means."""
    if not isinstance(value, list) or not all(type(i) is int for i in value):
        return None
    return tuple(value)


REASONS = ("forward", "backward", "walk")
"""The phases a change is reported in."""
FIELDS = {"phase", "target", "during", "before", "after"}
"""The keys of one reported change, exactly."""


@dataclass(frozen=True)
class Change:
    """One value a call changed: in which ``phase``, which ``target`` (a node's number, or
    ``OUT_GRAD``), while which node's op ran (``during``, None: a whole walk)."""

    phase: str
    target: int
    during: int | None
    before: np.ndarray
    after: np.ndarray

    def describe(self) -> str:
        """Before and after, and by how much where the shape held."""
        text = f"it was {show(self.before)} before, {show(self.after)} after"
        if self.before.shape == self.after.shape:
            with np.errstate(invalid="ignore", over="ignore"):
                moved = np.abs(self.after - self.before)
            largest = moved[np.isfinite(moved)].max(initial=0.0)
            if largest > 0:
                text += f" (largest change {largest:.6g})"
        return text


def changes(answer: dict[str, Any], nodes: int) -> tuple[Change, ...]:
    """The answer's ``mutated`` report (``grader.worker.probes.untouched``): the values that
    really differ, of ``nodes`` numbered nodes or the gradient given."""
    report = answer.get("mutated", [])
    if not isinstance(report, list) or len(report) > MAX_REPORTED:
        raise InvalidAnswer("the report of changed values is not a short list")
    found = []
    for entry in report:
        if not isinstance(entry, dict) or set(entry) != FIELDS:
            raise InvalidAnswer("a changed value is not reported as one")
        phase, target, during = entry["phase"], entry["target"], entry["during"]
        if (
            phase not in REASONS
            or type(target) is not int
            or not OUT_GRAD <= target < nodes
            or not (during is None or (type(during) is int and 0 <= during < nodes))
        ):
            raise InvalidAnswer("a changed value names no value of this example")
        before = decode_array(entry["before"], "a value before the call")
        after = decode_array(entry["after"], "a value after the call")
        if not np.array_equal(before, after, equal_nan=True):
            found.append(Change(phase, target, during, before, after))
    return tuple(found)


RECORDED_OPS = {
    "scalar": frozenset(MICROGRAD_PRIMITIVES),
    "tensor": frozenset(op.name for op in OPS.values() if op.function),
}
"""The ops the grader's recording parts make, in each kind of graph."""
NODE_KEYS = {"value", "op", "args", "param", "adds"}
"""The keys a recorded node may have."""


@dataclass(frozen=True)
class Made:
    """One recorded node: its value; the grader's op that made it (``op``, from the nodes
    ``args``, with ``param``), or what the student's own backward adds into earlier nodes for
    a gradient of one (``adds``: node, Jacobian of this node's value by that node's)."""

    value: np.ndarray
    op: str | None = None
    args: tuple[int, ...] = ()
    param: Any = None
    adds: tuple[tuple[int, np.ndarray], ...] = ()


@dataclass(frozen=True)
class Record:
    """A build the worker recorded (``grader.worker.recording``): every node in the order it
    was made, and which of them each named node of the graph is."""

    made: tuple[Made, ...]
    named: tuple[int, ...]


def _param(raw: Any) -> Any:
    """A parameter as the graph language holds it: None, a number or a tuple of ints."""
    param = param_from_json(raw)
    flat = param if isinstance(param, tuple) else (param,)
    if param is not None and not all(type(p) in (int, float) for p in flat):
        raise InvalidAnswer("a recorded op's parameter is not a number")
    return param


def _made(entry: Any, index: int, kind: str, made: list[Made]) -> Made:
    """Recorded node ``index``, made after ``made``."""
    if not isinstance(entry, dict) or not set(entry) <= NODE_KEYS:
        raise InvalidAnswer(f"recorded node {index} is malformed")
    value = decode_array(entry.get("value"), f"the value of node {index}")
    if "op" not in entry:
        adds = []
        for pair in field(entry, "adds", list) if "adds" in entry else []:
            if not (
                isinstance(pair, list)
                and len(pair) == 2
                and type(pair[0]) is int
                and 0 <= pair[0] < index
            ):
                raise InvalidAnswer(f"what node {index} adds is malformed")
            jacobian = decode_array(pair[1], f"what node {index} adds")
            if jacobian.shape != value.shape + made[pair[0]].value.shape:
                raise InvalidAnswer(f"what node {index} adds has shape {jacobian.shape}")
            adds.append((pair[0], jacobian))
        return Made(value, adds=tuple(adds))
    op, args = entry["op"], entry.get("args")
    if (
        op not in RECORDED_OPS[kind]
        or not isinstance(args, list)
        or not all(type(a) is int and 0 <= a < index for a in args)
        or len(args) != OPS[op].arity
    ):
        raise InvalidAnswer(f"recorded node {index} is not an op of the grader")
    return Made(value, op, tuple(args), _param(entry.get("param")))


def record(answer: dict[str, Any], kind: str, count: int) -> Record:
    """The answer's record of a graph of ``kind`` with ``count`` named nodes."""
    fields = field(answer, "record", dict)
    entries = field(fields, "nodes", list)
    named = field(fields, "named", list)
    if not entries or len(entries) > MAX_NODES:
        raise InvalidAnswer(f"{len(entries)} recorded nodes")
    if not all(type(i) is int and 0 <= i < len(entries) for i in named):
        raise InvalidAnswer("the named nodes are not recorded nodes")
    made: list[Made] = []
    for index, entry in enumerate(entries):
        made.append(_made(entry, index, kind, made))
    if len(named) != count:
        raise InvalidAnswer(f"{len(named)} named nodes for {count}")
    return Record(tuple(made), tuple(named))
