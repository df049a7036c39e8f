"""Examples run in a fresh interpreter, the trusted parent's side: launch, ask, read numbers.

A snippet: one sandboxed process per engine (``grader.worker.fresh``), started at the first
run; each run forks there, so each starts from an interpreter that never imported the engine.
Its reply is untrusted text: the parent keeps only the numbers printed, their brackets, and
whether an example raised. A run that hangs, crashes or answers garbage is None, never a
verdict. A grade's own requests: asked again of a new worker (``answered_alike``), which says
whether the example's failure needs what the grade's worker did before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grader.checks.launcher import LaunchSettings, sandboxed_worker
from grader.checks.session import IMPORT_BUDGET_FACTOR, Answered, GradingSession
from grader.sandbox.launch import SandboxUnavailable, SlotBusy, Worker, WorkerFailure
from grader.worker import fresh as fresh_worker
from grader.worker import protocol
from grader.worker.protocol import Probe

MODULE = "grader.worker.fresh"
MAX_VALUES = 10_000
"""Numbers read from one example's printed text; the rest are ignored."""
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
"""An object's address (``<Value object at 0x7f...>``): differs from run to run, no number."""
_VALUE = re.compile(
    r"(?<![\w.])(?:-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?inf|nan|None|True|False)\b"
)
_WORDS = {"None": None, "True": 1.0, "False": 0.0}
_BRACKETS = re.compile(r"[^\[\]()]")


def printed_values(text: str) -> list[float | None]:
    """The numbers in printed text, in order (``None`` printed is None, a bool is 1 or 0)."""
    values: list[float | None] = []
    for match in _VALUE.finditer(_ADDRESS.sub(" ", text)):
        token = match.group()
        values.append(_WORDS[token] if token in _WORDS else float(token))
        if len(values) == MAX_VALUES:
            break
    return values


def brackets(text: str) -> str:
    """The nesting of printed text (an array's shape shows in it), bounded."""
    return _BRACKETS.sub("", text)[: MAX_VALUES * 2]


@dataclass(frozen=True)
class Printed:
    """What the last example of a run printed (its numbers and brackets), whether it raised."""

    values: tuple[float | None, ...]
    raised: bool
    nesting: str = ""

    def same(self, other: Printed) -> bool:
        """The same outcome: both raised, or neither and the same numbers (to print precision)
        in the same brackets."""
        if self.raised or other.raised:
            return self.raised and other.raised
        if self.nesting != other.nesting:
            return False
        if [v is None for v in self.values] != [v is None for v in other.values]:
            return False
        mine = np.array([v for v in self.values if v is not None], dtype=float)
        theirs = np.array([v for v in other.values if v is not None], dtype=float)
        return bool(np.allclose(mine, theirs, rtol=1e-6, atol=1e-9, equal_nan=True))


def read_reply(reply: Any, examples: int) -> Printed | None:
    """The last example's outcome from an untrusted reply, or None (timed out, crashed,
    malformed, or stopped by an earlier example: then the run shows nothing of the last)."""
    if not isinstance(reply, dict) or not isinstance(reply.get("printed"), list):
        return None
    printed, raised = reply["printed"], reply.get("raised")
    if len(printed) != examples or not all(isinstance(p, str) for p in printed):
        return None
    if raised is not None and not isinstance(raised, str):
        return None
    last = printed[-1]
    return Printed(tuple(printed_values(last)), raised is not None, brackets(last))


class FreshRuns:
    """Runs of snippets against one engine folder, each in a fresh interpreter. ``preload``:
    modules the interpreter imports before any run (numpy, for a tensor engine), where every
    run would import them again."""

    def __init__(
        self,
        session: LaunchSettings,
        engine: Path,
        seconds: float,
        preload: Sequence[str] = (),
        launch: Callable[..., Worker] = sandboxed_worker,
    ) -> None:
        self._start = lambda: launch(session, MODULE, engine, preload)
        self._seconds = seconds
        self._worker: Worker | None = None
        self._unavailable = False

    def start(self) -> None:
        """Start the process now: its interpreter starts up while the caller goes on. One
        that cannot start (no free slot, no sandbox) makes every run say nothing."""
        if self._worker is not None or self._unavailable:
            return
        try:
            self._worker = self._start()
            self._worker.start()
        except (SandboxUnavailable, SlotBusy, OSError, WorkerFailure):
            self._unavailable = True

    def run(self, sources: list[str], keep: bool = False) -> Printed | None:
        """The examples run one after another in one fresh interpreter: the last one's
        outcome, or None when the run says nothing (see ``read_reply``). ``keep``: nothing an
        example leaves behind is freed before the run ends (``grader.worker.fresh``)."""
        self.start()
        if self._worker is None:
            return None
        try:
            reply = self._worker.request(
                {"sources": sources, "seconds": self._seconds, "keep": keep}, self._seconds + 5.0
            )
        except WorkerFailure:
            return None
        return read_reply(reply, len(sources))

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


class ReferenceRuns:
    """Runs of snippets against the reference, as ``FreshRuns`` has them run, each in a fork
    of this trusted process instead of a sandboxed one: the reference and the snippets are the
    grader's own, and a fork needs no interpreter, numpy or grader started and imported again
    (each of those cost a failing grade about 0.15 s of CPU per assignment)."""

    def __init__(self, engine: Path, seconds: float) -> None:
        self._root = str(engine)
        self._seconds = seconds

    def start(self) -> None:
        """Nothing to start: each run forks."""

    def run(self, sources: list[str], keep: bool = False) -> Printed | None:
        """As ``FreshRuns.run``."""
        reply = fresh_worker.run(sources, self._seconds, keep, root=self._root)
        return read_reply(reply, len(sources))

    def close(self) -> None:
        """Nothing to close: every run has ended."""


def answered_alike(session: GradingSession, item: str, answered: Answered) -> bool | None:
    """Whether a new worker, asked only this example's requests, gives the grade's results;
    None when it cannot tell (nothing recorded, an engine that does not import, a worker that
    fails or cannot start)."""
    if not answered:
        return None
    budget = session.budgets.get(item, 5.0)
    try:
        worker = sandboxed_worker(session)
    except (SandboxUnavailable, SlotBusy, OSError):
        return None

    def ask(message: dict[str, Any], seconds: float) -> dict[str, Any]:
        (result,) = protocol.results(worker.request(message, seconds), message)
        return result

    try:
        for number, assignment in enumerate(dict.fromkeys(a for (a, _, _), _ in answered)):
            load = protocol.request(
                -1 - number, assignment, Probe.LOAD, [session.load_case(assignment)]
            )
            if "ok" not in ask(load, budget * IMPORT_BUDGET_FACTOR):
                return None
        return all(
            ask(protocol.request(n, a, probe, [case]), budget) == result
            for n, ((a, probe, case), result) in enumerate(answered)
        )
    except (WorkerFailure, protocol.InvalidAnswer):
        return None
    finally:
        worker.close()
