"""Replay: the examples a grading test drew while it passed, asked again without Hypothesis.

For a given seed, Hypothesis draws the same examples for every submission until one of them
fails: what it draws next depends only on earlier examples having passed. So the examples a
test ran while it passed can be recorded once and, on the next grade, run through the same
check in the same order without drawing anything. If every one passes, the test has passed
exactly as a Hypothesis run would have. If one fails (or anything else happens), what the
replay did is undone and the test runs under Hypothesis as usual, which draws the same
examples, fails at the same one and shrinks as it always does. Verdicts, scores and
counterexamples are therefore those of a run without replay.

A recording is keyed by everything that decides what Hypothesis draws: the grader's own
source, the rubric, the seed, the test, its number of examples, and the versions of
Hypothesis and numpy. It holds plain JSON (never pickle): graphs, DAGs, arrays and numbers,
each checked to decode to exactly what was drawn before it is kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis
import numpy as np

from grader.atomic import write_atomically
from grader.language.dags import Dag
from grader.language.graphs import Graph
from grader.layout import PACKAGE
from grader.worker.probes import graph_from_json

FORMAT = 1
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
        return graph_from_json(value["graph"])
    if "dag" in value:
        data = value["dag"]
        return Dag(data["leaves"], tuple(tuple(tuple(p) for p in pairs)
                                         for pairs in data["nodes"]))
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
        return (a.kind == b.kind and repr(a.nodes) == repr(b.nodes)
                and _same(list(a.leaves), list(b.leaves)))
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


@functools.cache
def grader_digest() -> str:
    """The grader's own source: a change to a strategy or a suite changes what is drawn."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


IN_MEMORY = ":memory:"
"""``--grader-replay`` value for a batch lane's process: recordings live in ``MEMORY``."""
MEMORY: dict[str, str] = {}
"""A lane's recordings (by key), inherited by every grade it forks; never on disk."""
FRESH: dict[str, str] = {}
"""What this process recorded, for a forked grade to hand back to its lane."""


@dataclass
class Recordings:
    """Where recordings are kept (one JSON text per test and key, in a folder or in
    ``MEMORY``), and the examples of the test now running."""

    folder: Path | None
    """None: in ``MEMORY``."""
    context: str
    """What every key shares: the grader's source, the rubric, the seed, library versions."""
    current: list[dict[str, Any]] | None = None
    """The examples of the Hypothesis run under way, or None (none, or one not replayable)."""

    @classmethod
    def open(cls, where: str, rubric_digest: str, seed: int) -> Recordings:
        context = json.dumps([FORMAT, grader_digest(), rubric_digest, seed,
                              hypothesis.__version__, np.__version__])
        return cls(None if where == IN_MEMORY else Path(where), context)

    def _key(self, test: str, examples: int) -> str:
        return hashlib.sha256(json.dumps([self.context, test, examples]).encode()).hexdigest()

    def _read(self, key: str) -> str:
        if self.folder is None:
            return MEMORY[key]
        return (self.folder / f"{key}.json").read_text()

    def load(self, test: str, examples: int) -> list[dict[str, Any]] | None:
        """The recorded examples of ``test``, or None (never recorded, or unreadable)."""
        try:
            data = json.loads(self._read(self._key(test, examples)))
            return [decode_example(example) for example in data["examples"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def start(self) -> None:
        """A Hypothesis run begins: record what it draws."""
        self.current = []

    def record(self, example: dict[str, Any]) -> None:
        if self.current is None:
            return
        try:
            self.current.append(encode_example(example))
        except NotReplayable:
            self.current = None

    def save(self, test: str, examples: int) -> None:
        """The run passed: keep its examples for the next grade."""
        if self.current is not None:
            key = self._key(test, examples)
            text = json.dumps({"test": test, "examples": self.current})
            if self.folder is None:
                MEMORY[key] = FRESH[key] = text
            else:
                write_atomically(self.folder / f"{key}.json", text)
        self.current = None


def recording(inner: Callable[..., None], recordings: Recordings, fixtures: set[str]
              ) -> Callable[..., None]:
    """``inner`` (the test body Hypothesis calls) writing down what it was drawn: every
    argument but pytest's fixtures."""

    @functools.wraps(inner)
    def test(*args: Any, **kwargs: Any) -> None:
        if args:  # drawn arguments arrive by name; anything else is not ours to replay
            recordings.current = None
        recordings.record({k: v for k, v in kwargs.items() if k not in fixtures})
        inner(*args, **kwargs)

    return test
