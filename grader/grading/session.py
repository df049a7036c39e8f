"""A grading session: one submission, one worker, the oracles; the bookkeeping of a run.

The checks (``grader.checks``) ask the worker through the session. When the worker times out,
crashes, or a function is missing, the session records that on the running test and raises
``Aborted``, a skip exception that Hypothesis re-raises at once without shrinking:
re-running a hang on every shrink step would be ruinous, and a missing function needs no
smaller example. The plugin turns the record into the test's failure.
"""

from __future__ import annotations

import collections
import functools
import itertools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.language.verdicts import Tolerance, WrongAnswer
from grader.layout import PACKAGE, SECRET
from grader.oracles import torch_oracle
from grader.oracles.chain import Oracles
from grader.worker import protocol
from grader.worker.launch import Limits, Worker, WorkerFailure, worker_in_free_slot
from grader.worker.protocol import Request

ASSIGNMENT_OF_KIND = {"scalar": "micrograd", "tensor": "babygrad"}
IMPORT_BUDGET_FACTOR = 2
"""Importing a submission may take this many request budgets of CPU time (some engines run a
training loop at module level)."""
TEST_BUDGET_FACTOR = 6
"""A grading test may use this many request budgets of CPU time in all: slow examples cannot
make Hypothesis search, and above all shrink, for minutes."""
TEST_WALL_FACTOR = 4
"""...and this many times that of wall-clock time, a backstop for a starved machine."""
BATCH_CASES = 16
"""A replay asks the worker for this many of its planned requests' answers at once (``plan``):
one round trip instead of sixteen, and at most fifteen answers wasted where an engine leaves
the recorded run."""
class Aborted(pytest.skip.Exception):
    """Stops the running property at once; the plugin reports the recorded ``Abort``."""


def until(needs: tuple[str, ...]) -> str:
    """``not gradable until micrograd.ops.tanh passes`` (``... and ... pass`` for several)."""
    if len(needs) == 1:
        return f"not gradable until {needs[0]} passes"
    return f"not gradable until {', '.join(needs[:-1])} and {needs[-1]} pass"


class NotGradable(pytest.skip.Exception):
    """The example cannot grade the running test's item until other items pass (``needs``):
    what the item grades rests on parts of the student's engine that do not work yet (one of
    them raised, hung, crashed, is missing or gave wrong numbers). Like ``Aborted`` it stops
    the property at once, without shrinking; the plugin reports the test as not gradable,
    which costs nothing (``grader.grading.scoring``)."""

    def __init__(self, needs: tuple[str, ...]) -> None:
        super().__init__(until(needs))
        self.needs = needs


@dataclass
class Abort:
    """Why a test stopped asking the worker: it scores as this status with this reason."""

    status: str
    reason: str
    failure: WrongAnswer | None = None
    """The verdict to report instead, when the test had already failed (shrinking stopped)."""
    request: bool = False
    """The student's code failed on the request itself (a hang, a crash, a missing function),
    as opposed to importing it or the test's own time running out (``try_ask``)."""


def recorded(check: Callable[..., None]) -> Callable[..., None]:
    """Remember a check's latest verdict on the running test (during shrinking, the smallest
    example so far), for the test to report if its time runs out."""

    @functools.wraps(check)
    def recording(self: GradingSession, *args: Any, **kwargs: Any) -> None:
        try:
            check(self, *args, **kwargs)
        except WrongAnswer as failure:
            self.failures[self.current_test] = failure
            raise

    return recording


@dataclass
class Planned:
    """A request a replay expects the checks to make, and the worker's answer once asked."""

    request: Request
    text: str
    """The request as JSON: what a check's request must equal to be answered from here."""
    result: dict[str, Any] | None = None


def _request_text(assignment: str, probe: str, case: dict[str, Any]) -> str:
    return json.dumps([assignment, probe, case], separators=(",", ":"))


@dataclass
class GradingSession:
    """Everything one grading run of one submission needs."""

    submission: Path
    tolerances: dict[str, Tolerance]
    reference_dir: Path | None = None
    use_torch: bool = True
    """PyTorch may be an oracle when installed (off: grade as a student release without it)."""
    sandbox: str = "auto"
    slot: int = 0
    limits: Limits = field(default_factory=Limits)
    budgets: dict[str, float] = field(default_factory=dict)
    import_budget: float | None = None
    """CPU seconds importing the submission may take; None: ``IMPORT_BUDGET_FACTOR`` request
    budgets of the running item."""
    current_item: str = ""
    current_test: str = ""
    aborts: dict[str, Abort] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.oracles = Oracles(self.reference_dir, self.use_torch)
        self._worker: Worker | None = None
        self._next_id = 0
        self.checks = 0
        self.failures: dict[str, WrongAnswer] = {}
        self.import_failures: dict[str, tuple[str, str]] = {}
        self._imported: set[str] = set()
        self._test_started: dict[str, tuple[float, float, float]] = {}
        self.asked: list[Request] = []
        """Every request the checks made, in order (a recording keeps each call's)."""
        self._plan: collections.deque[Planned] = collections.deque()
        self.batching = True
        """Off once a batch of planned requests went wrong: then each is asked alone."""

    @property
    def worker(self) -> Worker:
        if self._worker is None:
            hidden = list(SECRET)
            torch_dir = torch_oracle.location()
            if torch_dir is not None:
                hidden.append(torch_dir)
            if self.reference_dir is not None:
                hidden.append(self.reference_dir.resolve())
            self._worker = worker_in_free_slot(
                [sys.executable, "-I", "-m", "grader.worker.runner"], first_slot=self.slot,
                submission=self.submission, readable=[Path(sys.prefix), PACKAGE],
                hidden=hidden, limits=self.limits, sandbox=self.sandbox)
        return self._worker

    @property
    def protections(self) -> list[str]:
        return list(self._worker.protections) if self._worker is not None else []

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()

    def checkpoint(self) -> tuple[int, int]:
        """What a replay that fails must give back (``rewind``): the counts it added to."""
        return self.checks, self.oracles.disagreements

    def rewind(self, mark: tuple[int, int]) -> None:
        """Forget what the running test did since ``mark``: it starts again, budget and all."""
        self.plan([])
        self.checks, self.oracles.disagreements = mark
        for record in (self.failures, self.aborts, self._test_started):
            record.pop(self.current_test, None)

    # -- talking to the worker ------------------------------------------------------------

    def ask(self, assignment: str, probe: str, case: dict[str, Any],
            snippet: Callable[[], str], on_timeout: WrongAnswer | None = None
            ) -> dict[str, Any]:
        """One probe on the student's engine: the validated ok-result. A Python exception from
        the student's code is a ``WrongAnswer``; a hang, a crash or a missing function is
        recorded and raises ``Aborted``, except a timeout where the check says what running
        out of time means (``on_timeout``)."""
        budget = self.budgets.get(self.current_item, 5.0)
        self._check_test_time(budget * TEST_BUDGET_FACTOR)
        self._import(assignment, budget)
        self.asked.append((assignment, probe, case))
        result = self._planned_answer(assignment, probe, case, budget)
        if result is None:
            result = self._request(assignment, probe, case, budget, on_timeout)
        self.checks += 1
        if "ok" in result:
            return result["ok"]
        error = result["error"]
        if error["status"] == "missing":
            self._abort("missing", error["message"], request=True)
        raise WrongAnswer("error", error["message"], [f"  at {f}" for f in error["frames"]],
                           snippet())

    def try_ask(self, assignment: str, probe: str, case: dict[str, Any],
                snippet: Callable[[], str]) -> dict[str, Any] | None:
        """``ask``, where the student's code failing on this very request (an exception, a
        missing function, a hang, a crash, an invalid reply) is None instead of a verdict,
        and charges the running test nothing. A submission that cannot be imported and a test
        out of time still abort."""
        try:
            return self.ask(assignment, probe, case, snippet)
        except WrongAnswer:
            return None
        except Aborted:
            abort = self.aborts.get(self.current_test)
            if abort is None or not abort.request:
                raise
            del self.aborts[self.current_test]
            return None

    def plan(self, requests: list[Request]) -> None:
        """The requests a replay expects the checks to make next, in this order: ``ask``
        answers each from a batch of up to ``BATCH_CASES`` the worker answered at once, as
        long as the checks ask exactly what was planned. The worker runs the cases of a batch
        one after the other, as it would one request at a time; at the first request that
        differs, the rest of the plan is dropped."""
        self._plan = collections.deque(Planned(request, _request_text(*request))
                                       for request in requests)

    def _planned_answer(self, assignment: str, probe: str, case: dict[str, Any], budget: float
                        ) -> dict[str, Any] | None:
        """The planned answer to this request, or None: no plan, not the plan's next request,
        or the batch went wrong (then batching stops for this grade: a batch is given one
        request's time budget, which a slow but correct engine may not meet)."""
        if (not self._plan or not self.batching
                or self._plan[0].text != _request_text(assignment, probe, case)):
            self._plan.clear()
            return None
        if self._plan[0].result is None:
            batch = list(itertools.takewhile(lambda planned: planned.request[:2] == (
                assignment, probe), itertools.islice(self._plan, BATCH_CASES)))
            try:
                results = self._exchange(assignment, probe,
                                         [planned.request[2] for planned in batch], budget)
            except (WorkerFailure, protocol.InvalidAnswer):
                self.batching = False
                self._plan.clear()
                self._import(assignment, budget)  # the worker restarts
                return None
            for planned, result in zip(batch, results, strict=True):
                planned.result = result
        return self._plan.popleft().result

    def _exchange(self, assignment: str, probe: str, cases: list[dict[str, Any]],
                  budget: float) -> list[dict[str, Any]]:
        """One request to the worker: a validated result per case, or ``WorkerFailure`` /
        ``protocol.InvalidAnswer``."""
        self._next_id += 1
        message = protocol.request(self._next_id, assignment, probe, cases)
        return protocol.results(self.worker.request(message, budget), message)

    def _request(self, assignment: str, probe: str, case: dict[str, Any], budget: float,
                 on_timeout: WrongAnswer | None = None) -> dict[str, Any]:
        """One validated result; a dead, hung or garbling worker aborts the running test."""
        try:
            (result,) = self._exchange(assignment, probe, [case], budget)
        except WorkerFailure as failure:
            if failure.kind == "timeout" and on_timeout is not None:
                raise on_timeout from None
            self._abort("timeout" if failure.kind == "timeout" else "error", failure.detail,
                        request=True)
        except protocol.InvalidAnswer as exc:
            self._abort("error", f"invalid answer: {exc}", request=True)
        return result

    def _import(self, assignment: str, budget: float) -> None:
        """Import the submission in a (fresh) worker before probing it, with its own budget
        (``import_budget``; the running item's request ``budget`` sets the default).

        A submission that cannot be imported (syntax error, exception, hang or crash at import)
        fails every item of the assignment at once with that reason: no shrinking and no
        timeout per item. A slow import (a training loop at module level) is not charged to
        the first probe."""
        if assignment in self.import_failures:
            self._abort(*self.import_failures[assignment])
        if not self.worker.running:
            self._imported.clear()
        if assignment in self._imported:
            return
        try:
            result = self._request(assignment, "load", {}, budget * IMPORT_BUDGET_FACTOR
                                   if self.import_budget is None else self.import_budget)
        except Aborted:
            abort = self.aborts[self.current_test]
            self.import_failures[assignment] = (abort.status, f"while importing: {abort.reason}")
            self.aborts[self.current_test] = Abort(*self.import_failures[assignment])
            raise
        if "error" in result:
            error = result["error"]
            where = f" (at {error['frames'][-1]})" if error["frames"] else ""
            self.import_failures[assignment] = (
                "missing" if error["status"] == "missing" else "error",
                f"{error['message']}{where}")
            self._abort(*self.import_failures[assignment])
        self._imported.add(assignment)

    def _abort(self, status: str, reason: str, failure: WrongAnswer | None = None, *,
               request: bool = False) -> None:
        self.aborts[self.current_test] = Abort(status, reason, failure, request)
        raise Aborted(reason)

    def _check_test_time(self, limit: float) -> None:
        """Stop the running test once it has used ``limit`` seconds of CPU time (the grader's
        and the worker's), or ``TEST_WALL_FACTOR`` times that of wall time: with its latest
        failure (the search for a smaller example ends there), else as a timeout. CPU time is
        read only once the wall clock passes the limit, and machine load does not move it."""
        now = time.monotonic()
        if self.current_test not in self._test_started:
            self._test_started[self.current_test] = (now, time.process_time(),
                                                     self.worker.cpu_seconds())
        wall, cpu, worker_cpu = self._test_started[self.current_test]
        if now - wall <= limit:
            return
        used = time.process_time() - cpu + max(0.0, self.worker.cpu_seconds() - worker_cpu)
        if used <= limit and now - wall <= limit * TEST_WALL_FACTOR:
            return
        failure = self.failures.get(self.current_test)
        if failure is not None:
            failure.details = [*failure.details, f"(examples were slow: the search for a "
                                                 f"smaller one stopped after {limit:g} s)"]
            self._abort(failure.status, failure.reason, failure)
        self._abort("timeout", f"its examples took more than {limit:g} s in all (each request "
                               "was within its own time limit)")

    def arrays(self, answer: dict[str, Any], key: str, labels: list[str],
               shapes: list[tuple[int, ...]]) -> list[np.ndarray | None]:
        """Decode a list of arrays from an answer; a missing gradient decodes to None."""
        items = protocol.field(answer, key, list)
        if len(items) != len(labels):
            raise protocol.InvalidAnswer(f"{len(items)} {key} for {len(labels)} nodes")
        return [None if item is None else protocol.decode_array(item, label)
                for item, label, _ in zip(items, labels, shapes, strict=True)]

    def decoded(self, answer: dict[str, Any], key: str, labels: list[str],
                 shapes: list[tuple[int, ...]], snippet: str) -> list[np.ndarray | None]:
        try:
            return self.arrays(answer, key, labels, shapes)
        except protocol.InvalidAnswer as exc:
            raise WrongAnswer("error", f"invalid answer: {exc}", [], snippet) from None
