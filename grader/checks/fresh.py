"""Snippets run in a fresh interpreter, the trusted parent's side: launch, ask, read numbers.

One sandboxed process per engine (``grader.worker.fresh``), started at the first run; each run
forks there, so each starts from an interpreter that never imported the engine. Its reply is
untrusted text: the parent keeps only the numbers printed (and whether an example raised),
and a run that hangs, crashes or answers garbage is None, never a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grader.checks.launcher import LaunchSettings, sandboxed_worker
from grader.worker.launch import SandboxUnavailable, SlotBusy, Worker, WorkerFailure

MODULE = "grader.worker.fresh"
MAX_VALUES = 10_000
"""Numbers read from one example's printed text; the rest are ignored."""
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
"""An object's address (``<Value object at 0x7f...>``): differs from run to run, no number."""
_VALUE = re.compile(r"(?<![\w.])(?:-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?inf|nan|None)\b")


def printed_values(text: str) -> list[float | None]:
    """The numbers in printed text, in order (``None`` printed is None): all a run says."""
    values: list[float | None] = []
    for match in _VALUE.finditer(_ADDRESS.sub(" ", text)):
        token = match.group()
        values.append(None if token == "None" else float(token))
        if len(values) == MAX_VALUES:
            break
    return values


@dataclass(frozen=True)
class Printed:
    """What the last example of a run printed (as numbers) and whether it raised."""

    values: tuple[float | None, ...]
    raised: bool

    def same(self, other: Printed) -> bool:
        """The same outcome: both raised, or neither and the same numbers (to print precision)."""
        if self.raised or other.raised:
            return self.raised and other.raised
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
    return Printed(tuple(printed_values(printed[-1])), raised is not None)


class FreshRuns:
    """Runs of snippets against one engine folder, each in a fresh interpreter."""

    def __init__(
        self,
        session: LaunchSettings,
        engine: Path,
        seconds: float,
        launch: Callable[..., Worker] = sandboxed_worker,
    ) -> None:
        self._start = lambda: launch(session, MODULE, engine)
        self._seconds = seconds
        self._worker: Worker | None = None
        self._unavailable = False

    def run(self, sources: list[str]) -> Printed | None:
        """The examples run one after another in one fresh interpreter: the last one's
        outcome, or None when the run says nothing (see ``read_reply``), as when no process
        could be started (no free slot, no sandbox)."""
        if self._unavailable:
            return None
        try:
            if self._worker is None:
                self._worker = self._start()
            reply = self._worker.request(
                {"sources": sources, "seconds": self._seconds}, self._seconds + 5.0
            )
        except (SandboxUnavailable, SlotBusy, OSError):
            self._unavailable = True
            return None
        except WorkerFailure:
            return None
        return read_reply(reply, len(sources))

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
