"""A batch's progress for long runs: which uploads are being graded, the slowest so far, and the
time left.

On a terminal it is a live bar. Into a log (a CI job, ``nohup``, a pipe) a live bar prints
nothing until it ends, so there a line is printed every ``every`` uploads instead, and at the
end: someone tailing the log of a class of 300 sees it move and where it waits.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

EVERY = 10
"""Uploads between two lines when the output is not a terminal."""
SHOWN = 2
"""Uploads in progress named on the bar (with ``-j`` many at once, the longest-running)."""


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 5 s``, ``1 h 2 min``."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class Tracker:
    """What a batch has graded so far; ``start`` and ``finish`` may be called from any
    thread (a lane's, as each upload starts)."""

    def __init__(self, total: int, done: int) -> None:
        self.total = total
        self.done = done
        self.graded = self.failed = 0
        self.running: dict[str, float] = {}
        self.slowest: tuple[str, float] | None = None
        self.began = time.monotonic()
        self._lock = threading.Lock()

    def start(self, student: str) -> None:
        with self._lock:
            self.running[student] = time.monotonic()

    def finish(self, student: str, failed: bool, seconds: float | None = None) -> None:
        """``student`` done; ``seconds``: its grading time where it was not ``start``ed here
        (a Dask worker's)."""
        with self._lock:
            began = self.running.pop(student, None)
            took = time.monotonic() - began if began is not None else seconds or 0.0
            if self.slowest is None or took > self.slowest[1]:
                self.slowest = (student, took)
            self.done += 1
            self.failed += failed
            self.graded += 1

    def current(self) -> str:
        """The uploads being graded, longest-running first, with how long so far."""
        now = time.monotonic()
        with self._lock:
            running = sorted(self.running.items(), key=lambda pair: pair[1])
        shown = [f"{student} {duration(now - began)}" for student, began in running[:SHOWN]]
        more = f" +{len(running) - SHOWN}" if len(running) > SHOWN else ""
        return "now: " + ", ".join(shown) + more if shown else ""

    def slowest_text(self) -> str:
        if self.slowest is None:
            return ""
        return f"slowest: {self.slowest[0]} {duration(self.slowest[1])}"

    def left(self) -> str:
        """The time left at the rate of the uploads graded in this run ("" before the first)."""
        if not self.graded:
            return ""
        rate = (time.monotonic() - self.began) / self.graded
        return f"about {duration(rate * (self.total - self.done))} left"

    def line(self) -> str:
        """The whole state in one line, for a log."""
        parts = [
            f"{self.done}/{self.total} uploads",
            f"{self.failed} failed",
            self.current(),
            self.slowest_text(),
            self.left() if self.done < self.total else "",
        ]
        return "; ".join(p for p in parts if p)


class _Live(ProgressColumn):
    """A column read from the tracker at each refresh, so a long upload's clock runs."""

    def __init__(self, tracker: Tracker) -> None:
        super().__init__()
        self.tracker = tracker

    def render(self, task: Task) -> Text:
        tracker = self.tracker
        parts = [tracker.current(), tracker.slowest_text(), tracker.left()]
        return Text("  ".join(p for p in parts if p))


class BatchProgress:
    """The bar on a terminal, or a line every ``every`` uploads elsewhere."""

    def __init__(self, console: Console, total: int, done: int, every: int = EVERY) -> None:
        self.console = console
        self.tracker = Tracker(total, done)
        self.every = max(1, every)
        self.live = console.is_terminal
        self._bar = Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failures]} failed"),
            TimeElapsedColumn(),
            _Live(self.tracker),
            console=console,
            disable=not self.live,
        )
        self._task = self._bar.add_task("grading", total=total, completed=done, failures=0)

    def __enter__(self) -> BatchProgress:
        self._bar.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._bar.__exit__(kind, error, trace)
        if not self.live and self.tracker.graded % self.every and error is None:
            self.console.print(self.tracker.line(), markup=False, soft_wrap=True)

    def finished(self, student: str, failed: bool, seconds: float | None = None) -> None:
        self.tracker.finish(student, failed, seconds)
        self._bar.update(self._task, advance=1, failures=self.tracker.failed)
        if not self.live and self.tracker.graded % self.every == 0:
            self.console.print(self.tracker.line(), markup=False, soft_wrap=True)
