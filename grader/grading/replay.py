"""Replay: a grading test's recorded Hypothesis runs, walked again without Hypothesis.

For a given seed, what Hypothesis does next depends only on what the test did so far: which
examples passed, and which failed and how (the exception's type and where it was raised, its
"interesting origin"). Drawing, shrinking and the final re-run of the smallest failing example
are all a fixed function of that history. So a run can be recorded as the list of examples the
test body was called with, each with its outcome, and how the run ended (passed, or which call's
failure it reported). A later grade calls the same checks on the same examples in the same
order, without Hypothesis, as long as each outcome is one a recorded run had. If it reaches the
end of a recorded run, the test has passed, or failed with that same call's verdict, exactly as
a Hypothesis run would have: correct engines replay the reference's run, and an engine with a
bug another submission had (or the student's last grade) replays that shrink. At the first
outcome no recording has, what the replay did is undone and the test runs under Hypothesis as
usual, which draws, fails and shrinks as it always does. Verdicts, scores and counterexamples
are therefore those of a run without replay.

A recording is keyed by everything that decides what Hypothesis draws: the grader's own
source, the rubric, the seed, the test, its number of examples, and the versions of
Hypothesis and numpy. It holds plain JSON (never pickle): graphs, DAGs, arrays and numbers,
each checked to decode to exactly what was drawn before it is kept. A test may have several
recorded runs (one per way of failing that has been met), each under its own key.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import numpy as np
from hypothesis.internal.escalation import InterestingOrigin

from grader.atomic import keep_newest, write_atomically
from grader.grading.options import IN_MEMORY
from grader.language.dags import Dag
from grader.language.graphs import Graph
from grader.layout import grader_digest
from grader.worker.protocol import Request

FORMAT = 2
"""Bumped when the recording format changes: older recordings are then never read."""


class NotReplayable(Exception):
    """An example this module cannot write down exactly: the test is not recorded."""


def _encode(value: Any) -> Any:
    if isinstance(value, Graph):
        return {"graph": value.to_json()}
    if isinstance(value, Dag):
        return {"dag": value.to_json()}
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": value.dtype.str, "shape": list(value.shape)}
    if isinstance(value, np.floating | np.integer):
        return {"numpy": value.item(), "dtype": value.dtype.str}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if value is None or type(value) in (bool, int, float, str):
        return value
    raise NotReplayable(type(value).__name__)


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "graph" in value:
        return Graph.from_json(value["graph"])
    if "dag" in value:
        data = value["dag"]
        return Dag(data["leaves"], tuple(tuple(tuple(p) for p in pairs) for pairs in data["nodes"]))
    if "array" in value:
        return np.array(value["array"], dtype=value["dtype"]).reshape(value["shape"])
    if "numpy" in value:
        return np.dtype(value["dtype"]).type(value["numpy"])
    return tuple(_decode(v) for v in value["tuple"])


def _same(a: Any, b: Any) -> bool:
    """Exactly the same example: types, shapes, dtypes and every bit of every number."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, Graph):
        return (
            a.kind == b.kind
            and repr(a.nodes) == repr(b.nodes)
            and _same(list(a.leaves), list(b.leaves))
        )
    if isinstance(a, Dag):
        return repr(a) == repr(b)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float | np.floating):
        return np.array(a).tobytes() == np.array(b).tobytes()
    return a == b


def encode_example(example: dict[str, Any]) -> dict[str, Any]:
    """The drawn arguments as JSON, or ``NotReplayable`` if they would not come back exact."""
    encoded = {name: _encode(value) for name, value in example.items()}
    decoded = decode_example(json.loads(json.dumps(encoded)))
    if not all(_same(example[name], decoded[name]) for name in example):
        raise NotReplayable("an example does not survive JSON exactly")
    return encoded


def decode_example(encoded: dict[str, Any]) -> dict[str, Any]:
    return {name: _decode(value) for name, value in encoded.items()}


MEMORY: dict[str, str] = {}
"""A lane's recordings (by key), inherited by every grade it forks; never on disk."""
FRESH: dict[str, str] = {}
"""What this process recorded, for a forked grade to hand back to its lane."""
RUNS_ON_DISK = 8
"""Recorded runs of one test a recordings folder keeps (a batch's memory keeps every one)."""


def origin(failure: BaseException) -> str:
    """How Hypothesis tells one failure from another (exception type, where it was raised, its
    context): two failures with the same origin lead it to do the same thing next."""
    return str(InterestingOrigin.from_exception(failure))


@dataclass(frozen=True)
class Call:
    """One call of a test's body in a recorded run."""

    example: dict[str, Any]
    """The drawn arguments (JSON)."""
    outcome: str | None
    """None (passed) or the failure's origin."""
    requests: list[Request]
    """What the check asked the worker, in order: a replay asks for their answers ahead, in
    batches."""


@dataclass(frozen=True)
class Run:
    """One recorded Hypothesis run of a test, as its body saw it."""

    calls: list[Call]
    reported: int | None
    """How the run ended: None, passed; else the call whose failure the test reported."""

    @classmethod
    def from_json(cls, text: str) -> Run:
        """A run from its recording; ``ValueError`` (or a ``KeyError``, ``TypeError``) when it
        is not one."""
        data = json.loads(text)
        calls = [
            Call(example, outcome, [(a, p, c) for a, p, c in requests])
            for example, outcome, requests in data["calls"]
        ]
        reported = data["reported"]
        well_formed = all(
            isinstance(call.example, dict)
            and (call.outcome is None or isinstance(call.outcome, str))
            and all(
                isinstance(a, str) and isinstance(p, str) and isinstance(c, dict)
                for a, p, c in call.requests
            )
            for call in calls
        )
        # A passing run met no failure; a failing one reports a call that failed.
        ends_right = (
            all(call.outcome is None for call in calls)
            if reported is None
            else type(reported) is int
            and 0 <= reported < len(calls)
            and calls[reported].outcome is not None
        )
        if not (well_formed and ends_right):
            raise ValueError("not a recorded run")
        return cls(calls, reported)


class Diverged(Exception):
    """An outcome no recorded run had: from here on only Hypothesis knows what comes next."""


def follow(
    runs: list[Run],
    attempt: Callable[[dict[str, Any]], Exception | None],
    plan: Callable[[list[Request]], None],
) -> Exception | None:
    """Call ``attempt`` on the recorded examples in order while its outcomes (the exception it
    returns, or None) match a recorded run's; at the end of that run, return the failure the
    run reported (None: it passed). ``Diverged`` when no recorded run matches. ``plan`` is told
    the requests the first matching run made from here on, whenever that run changes: the
    worker can answer them ahead, in batches.

    Every run that matches the history so far must agree on what comes next, as Hypothesis
    would: recordings that do not (made under conditions the key missed) are not trusted."""
    raised: list[Exception | None] = []
    candidates = runs
    planned = None
    while True:
        step = len(raised)
        ended = {run.reported for run in candidates if len(run.calls) == step}
        if ended:
            if len(ended) > 1 or any(len(run.calls) != step for run in candidates):
                raise Diverged("recorded runs disagree on where the run ends")
            (reported,) = ended
            return None if reported is None else raised[reported]
        example = candidates[0].calls[step].example
        if any(run.calls[step].example != example for run in candidates[1:]):
            raise Diverged("recorded runs disagree on the next example")
        if candidates[0] is not planned:
            planned = candidates[0]
            plan([request for call in planned.calls[step:] for request in call.requests])
        failure = attempt(decode_example(example))
        raised.append(failure)
        outcome = None if failure is None else origin(failure)
        candidates = [run for run in candidates if run.calls[step].outcome == outcome]
        if not candidates:
            raise Diverged(f"call {step}: an outcome no recorded run had")


@dataclass
class Recordings:
    """Where recordings are kept (one JSON text per recorded run, in a folder or in
    ``MEMORY``), and the run of the test now under way."""

    folder: Path | None
    """None: in ``MEMORY``."""
    context: str
    """What every key shares: the grader's source, the rubric, the seed, library versions."""
    current: list[list[Any]] | None = None
    """The calls of the Hypothesis run under way, ``[example, outcome, requests]`` each, or
    None (no run, or one that cannot be recorded)."""
    raised: list[BaseException | None] = field(default_factory=list)
    """What each of those calls raised, to find the one whose failure the test reports."""
    _names: list[str] | None = None
    """The folder's recordings, listed once per process (and this process's own saves)."""

    @classmethod
    def open(cls, where: str, rubric_digest: str, seed: int) -> Recordings:
        context = json.dumps(
            [FORMAT, grader_digest(), rubric_digest, seed, hypothesis.__version__, np.__version__]
        )
        return cls(None if where == IN_MEMORY else Path(where), context)

    def _key(self, test: str, examples: int) -> str:
        return hashlib.sha256(json.dumps([self.context, test, examples]).encode()).hexdigest()

    def _texts(self, test_key: str) -> list[str]:
        prefix = f"{test_key}."
        if self.folder is None:
            return [text for key, text in MEMORY.items() if key.startswith(prefix)]
        if self._names is None:
            try:
                self._names = [p.name for p in self.folder.iterdir()]
            except OSError:
                self._names = []
        texts = []
        for name in self._names:
            if name.startswith(prefix) and name.endswith(".json"):
                try:
                    texts.append((self.folder / name).read_text())
                except OSError:
                    continue
        return texts

    def load(self, test: str, examples: int) -> list[Run]:
        """The recorded runs of ``test`` that can be read (none: never recorded), the passing
        one first: most engines take its path, and a replay asks ahead along the first."""
        runs = []
        for text in self._texts(self._key(test, examples)):
            try:
                runs.append(Run.from_json(text))
            except (ValueError, KeyError, TypeError):
                continue
        return sorted(runs, key=lambda run: run.reported is not None)

    def start(self) -> None:
        """A Hypothesis run begins: record what it calls the test body with."""
        self.current, self.raised = [], []

    def record(self, example: dict[str, Any]) -> None:
        if self.current is None:
            return
        try:
            self.current.append([encode_example(example), None, []])
            self.raised.append(None)
        except NotReplayable:
            self.current = None

    def failed(self, failure: BaseException) -> None:
        """The call just recorded raised ``failure``."""
        if self.current is not None:
            self.current[-1][1] = origin(failure)
            self.raised[-1] = failure

    def asked(self, requests: list[Request]) -> None:
        """What the call just recorded asked the worker."""
        if self.current is not None:
            self.current[-1][2] = [list(request) for request in requests]

    def save(self, test: str, examples: int, reported: BaseException | None) -> None:
        """The run ended, passing (``reported`` None) or reporting a failure one of its calls
        raised: keep it for later grades. A run that reported anything else is not kept."""
        calls, raised = self.current, self.raised
        self.current, self.raised = None, []
        if calls is None:
            return
        index = None
        if reported is not None:
            index = next((i for i, failure in enumerate(raised) if failure is reported), None)
            if index is None:
                return
        text = json.dumps({"test": test, "calls": calls, "reported": index})
        test_key = self._key(test, examples)
        key = f"{test_key}.{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        if self.folder is None:
            MEMORY[key] = FRESH[key] = text
            return
        path = self.folder / f"{key}.json"
        write_atomically(path, text, mode=0o600)
        if self._names is not None:
            self._names.append(path.name)
        keep_newest(path, f"{test_key}.*.json", RUNS_ON_DISK)  # one bug after another


def recording(
    inner: Callable[..., None], recordings: Recordings, fixtures: set[str], asked: list[Request]
) -> Callable[..., None]:
    """``inner`` (the test body Hypothesis calls) writing down what it was drawn (every
    argument but pytest's fixtures), what it asked the worker (what the checks append to
    ``asked``) and how it ended."""

    @functools.wraps(inner)
    def test(*args: Any, **kwargs: Any) -> None:
        if args:  # drawn arguments arrive by name; anything else is not ours to replay
            recordings.current = None
        recordings.record({k: v for k, v in kwargs.items() if k not in fixtures})
        start = len(asked)
        try:
            inner(*args, **kwargs)
        except BaseException as failure:
            recordings.failed(failure)
            raise
        finally:
            recordings.asked(asked[start:])

    return test
