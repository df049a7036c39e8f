"""A grading session: one submission, one worker, the oracles; the bookkeeping of a run.

The checks (``grader.checks``) ask the worker through the session. When the worker times out,
crashes, or a function is missing, the session records that on the running test
(``AbortRecord``) and raises ``Aborted``, a skip exception that Hypothesis re-raises at once
without shrinking: re-running a hang on every shrink step would be ruinous, and a missing
function needs no smaller example. The plugin turns the record into the test's failure.

What the asking rests on has types of its own: the worker comes from a factory (``launch``;
a real grade's is ``grader.checks.launcher``), a replay's requests are answered in batches by
``grader.checks.plan``, each test's time is kept by ``grader.checks.stopwatch``, and each
answer is decoded once, as it arrives, by ``grader.worker.replies``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from grader.checks.launcher import sandboxed_worker
from grader.checks.plan import ReplayPlan
from grader.checks.stopwatch import Stopwatch
from grader.language import profiles
from grader.language.assignments import Assignment, of_name
from grader.language.function_api import FunctionApi
from grader.language.profiles import Profile
from grader.language.tensor_api import BABYGRAD_API
from grader.language.verdicts import Tolerance, WrongAnswer
from grader.oracles.chain import Oracles
from grader.sandbox.launch import Limits, Worker, WorkerFailure
from grader.worker import protocol, replies
from grader.worker.protocol import Probe, Request
from grader.worker.replies import Answer

IMPORT_BUDGET_FACTOR = 2
"""Importing a submission may take this many request budgets of CPU time (some engines run a
training loop at module level)."""
TEST_BUDGET_FACTOR = 6
"""A grading test may use this many request budgets of CPU time in all: slow examples cannot
make Hypothesis search, and above all shrink, for minutes."""
FIRST_EXAMPLES = 8
"""The snippets of a test's first examples kept (``Examples``)."""
FAILED_CALLS = 64
"""The latest failing checks of a test whose requests and answers are kept."""


class Aborted(pytest.skip.Exception):
    """Stops the running property at once; the plugin reports the test's ``AbortRecord``."""


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
class AbortRecord:
    """Why a test stopped asking the worker: it scores as this status with this reason."""

    status: str
    reason: str
    failure: WrongAnswer | None = None
    """The verdict to report instead, when the test had already failed (shrinking stopped)."""
    request: bool = False
    """The student's code failed on the request itself (a hang, a crash, a missing function),
    as opposed to importing it or the test's own time running out (``try_ask``)."""


def remembers_verdict(check: Callable[..., None]) -> Callable[..., None]:
    """Remember a check's latest verdict on the running test (during shrinking, the smallest
    example so far), for the test to report if its time runs out, and what the failing check
    asked the worker and was answered (``failed_calls``), for a new worker to be asked the
    same (``grader.grading.reproduce``). (Writing a whole run down for replay is
    ``replay.recording``'s job, not this.) An answer found invalid only as the check uses it
    (a recorded build the oracles cannot differentiate, ``grader.checks.records``; ``ask``
    itself shows one that does not decode) is the student's invalid answer, shown with the
    example asked last, never a grader failure."""

    @functools.wraps(check)
    def remembering(self: GradingSession, *args: Any, **kwargs: Any) -> None:
        outermost = self.answered is None
        if outermost:
            self.answered = []
        try:
            try:
                check(self, *args, **kwargs)
            except protocol.InvalidAnswer as exc:  # found invalid as the check used it
                shown = self.examples.get(self.current_test, Examples()).latest
                raise WrongAnswer("error", f"invalid answer: {exc}", [], shown) from None
        except WrongAnswer as failure:
            self.failures[self.current_test] = failure
            if outermost:
                calls = self.failed_calls.setdefault(self.current_test, {})
                calls.pop(failure.snippet, None)
                calls[failure.snippet] = self.answered
                if len(calls) > FAILED_CALLS:
                    del calls[next(iter(calls))]
            raise
        finally:
            if outermost:
                self.answered = None

    return remembering


@dataclass
class Examples:
    """The snippets a test's checks asked with: the first ``FIRST_EXAMPLES`` examples (a check
    that asks twice for one example gives the same snippet twice in a row: kept once), and
    how many there were. A failing example may need the calls before it to go wrong again
    (``grader.grading.reproduce``)."""

    first: list[str] = field(default_factory=list)
    count: int = 0
    latest: str = ""

    def add(self, snippet: str) -> None:
        if not snippet or snippet == self.latest:
            return
        self.count += 1
        self.latest = snippet
        if len(self.first) < FIRST_EXAMPLES:
            self.first.append(snippet)

    @property
    def before_last(self) -> list[str]:
        """The first examples that came before the test's last one."""
        return self.first if self.count > len(self.first) else self.first[:-1]


Answered = list[tuple[Request, dict[str, Any]]]
"""Requests, each with the result the worker gave."""


WorkerFactory = Callable[["GradingSession"], Worker]
"""Starts the worker a session asks, at its first request; given the session for its launch
settings (``submission``, ``sandbox``, ``slot``, ``limits``, ``reference_dir``)."""


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
    launch: WorkerFactory = sandboxed_worker
    """The worker's factory: a real grade's runs the submission sandboxed (``sandbox``, from
    ``slot``, within ``limits``); a test's may answer in this process."""
    profile: Profile = field(default_factory=profiles.course)
    """The course API the submission is written for: where its walk lives."""
    budgets: dict[str, float] = field(default_factory=dict)
    import_budget: float | None = None
    """CPU seconds importing the submission may take (``--import-budget``); None: the rubric's
    ``import_budgets``, else ``IMPORT_BUDGET_FACTOR`` request budgets of the running item."""
    import_budgets: dict[str, float] = field(default_factory=dict)
    """The rubric's import budget of each assignment that sets one."""
    current_item: str = ""
    current_test: str = ""
    aborts: dict[str, AbortRecord] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.oracles = Oracles(self.reference_dir, self.use_torch, self.profile)
        self._worker: Worker | None = None
        self._next_id = 0
        self.checks = 0
        self.failures: dict[str, WrongAnswer] = {}
        self.import_failures: dict[str, tuple[str, str]] = {}
        self._imported: set[str] = set()
        self._stopwatches: dict[str, Stopwatch] = {}
        self.asked: list[Request] = []
        """Every request the checks made, in order (a recording keeps each call's)."""
        self.examples: dict[str, Examples] = {}
        """Each test's example snippets, by test."""
        self.answered: Answered | None = None
        """What the running check asked the worker and was answered (None: no check runs)."""
        self.failed_calls: dict[str, dict[str, Answered]] = {}
        """Each test's latest failing checks, by snippet: what each asked and was answered
        (the failure a test reports need not be its last: shrinking goes on after it)."""
        self._replay = ReplayPlan()

    @property
    def batching(self) -> bool:
        """Off once a batch of planned requests went wrong: then each is asked alone."""
        return self._replay.batching

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
        for record in (
            self.failures,
            self.aborts,
            self._stopwatches,
            self.examples,
            self.failed_calls,
        ):
            record.pop(self.current_test, None)

    def plan(self, requests: list[Request]) -> None:
        """The requests a replay expects the checks to make next, in this order: ``ask``
        answers them from batches the worker answered at once (``ReplayPlan``)."""
        self._replay.expect(requests)

    # -- talking to the worker ------------------------------------------------------------

    def ask(
        self,
        assignment: str,
        probe: str,
        case: dict[str, Any],
        snippet: str,
        on_timeout: WrongAnswer | None = None,
    ) -> Answer | None:
        """One probe on the student's engine: its answer, decoded (``replies.decode``). An
        answer that does not decode, or a Python exception from the student's code, is a
        ``WrongAnswer`` shown with ``snippet``; a hang, a crash or a missing function is
        recorded and raises ``Aborted``, except a timeout where the check says what running
        out of time means (``on_timeout``)."""
        budget = self.budgets.get(self.current_item, 5.0)
        gradient = self._gradient(assignment)
        self._check_test_time(budget * TEST_BUDGET_FACTOR)
        self._import(assignment, budget)
        request = (assignment, probe, case)
        self.asked.append(request)
        self.examples.setdefault(self.current_test, Examples()).add(snippet)
        result = self._planned_answer(request, budget)
        if result is None:
            result = self._request(assignment, probe, case, budget, on_timeout)
        if self.answered is not None:
            self.answered.append((request, result))
        self.checks += 1
        if "error" in result:
            error = result["error"]
            if error["status"] == "missing":
                self._abort("missing", error["message"], request=True)
            raise WrongAnswer(
                "error", error["message"], [f"  at {f}" for f in error["frames"]], snippet
            )
        try:
            return replies.decode(probe, case, result["ok"], gradient)
        except protocol.InvalidAnswer as exc:
            raise WrongAnswer("error", f"invalid answer: {exc}", [], snippet) from None

    def try_ask(self, assignment: str, probe: str, case: dict[str, Any]) -> Answer | None:
        """``ask``, where the student's code failing on this very request (an exception, a
        missing function, a hang, a crash, an invalid reply or answer) is None instead of a
        verdict, and charges the running test nothing (so no snippet: no verdict shows one). A
        submission that cannot be imported and a test out of time still abort."""
        try:
            return self.ask(assignment, probe, case, "")
        except WrongAnswer:
            return None
        except Aborted:
            abort = self.aborts.get(self.current_test)
            if abort is None or not abort.request:
                raise
            del self.aborts[self.current_test]
            return None

    def _gradient(self, assignment: str) -> str:
        """What the course calls a node's gradient (a class-based course's ``derivative``)."""
        own = self.profile.assignments.get(assignment)
        return (
            own.api.derivative if own is not None and isinstance(own.api, FunctionApi) else "grad"
        )

    def _started_worker(self) -> Worker:
        """The worker, launched at the first request: a run that asks nothing starts none."""
        if self._worker is None:
            self._worker = self.launch(self)
        return self._worker

    def _planned_answer(self, request: Request, budget: float) -> dict[str, Any] | None:
        """The replay plan's answer to ``request``, or None. A batch the worker failed
        restarted it: the submission is imported again before ``request`` is asked alone."""
        assignment, probe, _ = request
        try:
            return self._replay.answer(
                request, lambda cases: self._exchange(assignment, probe, cases, budget)
            )
        except (WorkerFailure, protocol.InvalidAnswer):
            self._import(assignment, budget)
            return None

    def _exchange(
        self, assignment: str, probe: str, cases: list[dict[str, Any]], budget: float
    ) -> list[dict[str, Any]]:
        """One request to the worker: a validated result per case, or ``WorkerFailure`` /
        ``protocol.InvalidAnswer``."""
        self._next_id += 1
        message = protocol.request(self._next_id, assignment, probe, cases)
        return protocol.results(self._started_worker().request(message, budget), message)

    def _request(
        self,
        assignment: str,
        probe: str,
        case: dict[str, Any],
        budget: float,
        on_timeout: WrongAnswer | None = None,
    ) -> dict[str, Any]:
        """One validated result; a dead, hung or garbling worker aborts the running test."""
        try:
            (result,) = self._exchange(assignment, probe, [case], budget)
        except WorkerFailure as failure:
            if failure.kind == "timeout" and on_timeout is not None:
                raise on_timeout from None
            self._abort(
                "timeout" if failure.kind == "timeout" else "error", failure.detail, request=True
            )
        except protocol.InvalidAnswer as exc:
            self._abort("error", f"invalid answer: {exc}", request=True)
        return result

    def _import(self, assignment: str, budget: float) -> None:
        """Import the submission in a (fresh) worker before probing it, with its own budget
        (``import_budget``, else the rubric's for the assignment; the running item's request
        ``budget`` sets the default).

        A submission that cannot be imported (syntax error, exception, hang or crash at import)
        fails every item of the assignment at once with that reason: no shrinking and no
        timeout per item. A slow import (a training loop at module level) is not charged to
        the first probe."""
        if assignment in self.import_failures:
            self._abort(*self.import_failures[assignment])
        if not self._started_worker().running:
            self._imported.clear()
        if assignment in self._imported:
            return
        try:
            result = self._request(
                assignment,
                Probe.LOAD,
                self.load_case(assignment),
                self._import_budget(assignment, budget),
            )
        except Aborted:
            abort = self.aborts[self.current_test]
            self.import_failures[assignment] = (abort.status, f"while importing: {abort.reason}")
            self.aborts[self.current_test] = AbortRecord(*self.import_failures[assignment])
            raise
        if "error" in result:
            error = result["error"]
            where = f" (at {error['frames'][-1]})" if error["frames"] else ""
            self.import_failures[assignment] = (
                "missing" if error["status"] == "missing" else "error",
                f"{error['message']}{where}",
            )
            self._abort(*self.import_failures[assignment])
        self._imported.add(assignment)

    def assignment(self, kind: str) -> Assignment:
        """The assignment of the profile that grades graphs of ``kind``."""
        return self.profile.assignment(kind)

    @property
    def item_assignment(self) -> Assignment:
        """The assignment the running item belongs to (the first part of its id, as the
        course names it: ``mytorch`` of ``mytorch.graphs``), the one a check of it asks: a
        check that grades either kind of graph is told by the item, not by the example."""
        prefix = self.current_item.split(".", 1)[0]
        own = self.profile.assignments.get(prefix)
        return self.assignment(own.kind if own is not None else of_name(prefix).kind)

    def load_case(self, assignment: str) -> dict[str, Any]:
        """The import request: a tensor course's API, unless it is babygrad's (the default)."""
        own = self.profile.assignments.get(assignment)
        api = own.api if own is not None else None
        return {} if api is None or api == BABYGRAD_API else {"api": api.to_json()}

    def _import_budget(self, assignment: str, budget: float) -> float:
        if self.import_budget is not None:
            return self.import_budget
        return self.import_budgets.get(assignment, budget * IMPORT_BUDGET_FACTOR)

    def _abort(
        self, status: str, reason: str, failure: WrongAnswer | None = None, *, request: bool = False
    ) -> None:
        self.aborts[self.current_test] = AbortRecord(status, reason, failure, request)
        raise Aborted(reason)

    def _check_test_time(self, limit: float) -> None:
        """Stop the running test once it has used ``limit`` seconds (``Stopwatch.over``): with
        its latest failure (the search for a smaller example ends there), else as a timeout."""
        worker_cpu = self._started_worker().cpu_seconds
        if self.current_test not in self._stopwatches:
            self._stopwatches[self.current_test] = Stopwatch.start(worker_cpu)
        if not self._stopwatches[self.current_test].over(limit, worker_cpu):
            return
        failure = self.failures.get(self.current_test)
        if failure is not None:
            failure.details = [
                *failure.details,
                f"(examples were slow: the search for a smaller one stopped after {limit:g} s)",
            ]
            self._abort(failure.status, failure.reason, failure)
        self._abort(
            "timeout",
            f"its examples took more than {limit:g} s in all (each request "
            "was within its own time limit)",
        )
