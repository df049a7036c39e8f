"""Snippets that replay: a failure's example is run as the student will run it before it is shown.

A grade's worker answers every test of a run in one process, so an engine that keeps state
between calls (a module-level visited set, a mutable default argument, a cache on the class)
can fail an example that, run alone, gives the right answer. Before feedback shows a failing
example, it runs in a fresh interpreter against the student's engine and against the
reference (whose output is the expected one). If the two differ, the example stands. If not,
either the example does not print what went wrong (a structure, a gradient it does not show)
or the failure needs what came before it: a new worker asked only this example's requests
tells which. In the first case (or where the new worker cannot tell) the example stands and
its feedback says that, run alone, it prints what the reference prints: a student who runs it
sees why. A failure that went wrong where a new object took a freed one's id within the
example's own requests is one of them: the snippet's objects are laid out otherwise. In the
second case the test's earlier examples are run first (1, 2, 4, ... of them) and the shortest
sequence that goes wrong is shown instead; if none does, the feedback says the failure depends
on state kept between calls. Only the example shown and those notes change: never a score or
a status, and a run that hangs or crashes changes nothing.

A sequence is shown only if it also goes wrong when nothing its earlier examples made is
freed (``FreshRuns.run(keep=True)``). One that goes right then went wrong only because a new
object took a freed one's memory, and so its ``id`` (a walk whose visited set of ids lives at
module level): whether that happens is luck of the interpreter's allocator and collector, the
same in every fork of one process and another in the student's, so the sequence proves
nothing there, and the state note is shown instead.

Cost: nothing for a passing grade; for a failing one, a sandboxed process of the student's
engine, started at the first failure so that it starts up while the grade goes on, and, per
failing item, two forked runs (its first failure's example: one of that process, one of this
trusted one against the reference).
Only an example that does not replay costs more (a new worker, the sequences, and a run that
keeps for each sequence that goes wrong), and only an item whose failure depends on state has
all its failures tried.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from grader.checks.fresh import FreshRuns, Printed, ReferenceRuns, answered_alike
from grader.checks.session import Answered, GradingSession
from grader.grading.scoring import TestOutcome

RUN_SECONDS = 10.0
"""CPU time one run may take before it is killed (and says nothing); a run that waits is
stopped at a multiple of it on the wall clock (``grader.worker.fresh.WALL_BACKSTOP``)."""
EARLIER = (1, 2, 4, 8)
"""How many of the test's earlier examples are tried before the failing one."""
CAUSES = "a module-level list or set, a mutable default argument, a class attribute used as a cache"
STATE_NOTE = (
    f"This failure depends on state kept between calls (e.g. {CAUSES}): running the example "
    "alone gives the right answer."
)
PRINTS_ALIKE_NOTE = (
    "Run alone as shown, this example prints what the reference solution prints: what went "
    "wrong is in something it does not print (print every value it builds), or needs what ran "
    "before it (state kept between calls, or a new object reusing a freed one's id())."
)
SEQUENCE_NOTE = (
    "Run alone, this example gives the right answer: it goes wrong after the test's earlier "
    "examples, so the example below runs {count} of them first. Look for state kept between "
    f"calls (e.g. {CAUSES})."
)


@dataclass
class Shown:
    """A failing test whose example the feedback shows, and the examples before it."""

    outcome: TestOutcome
    earlier: list[str]
    answered: Answered = field(default_factory=list)
    """What the failing check asked the grade's worker, and its answers."""


def shows_example(outcome: TestOutcome) -> bool:
    """A verdict on the student's numbers or code, with an example to show."""
    return not outcome.passed and outcome.status in ("failed", "error") and bool(outcome.snippet)


def sequence(earlier: Sequence[str], snippet: str) -> str:
    """The earlier examples, then the failing one, as one script."""
    parts = [f"# --- earlier example {n} of this test\n{e}" for n, e in enumerate(earlier, 1)]
    return "\n".join([*parts, f"# --- the example that goes wrong\n{snippet}"])


def goes_wrong(run: Printed | None, expected: Printed) -> bool:
    """A run that said something, and not what the reference says."""
    return run is not None and not run.same(expected)


Alike = Callable[[Shown], bool | None]
"""Does a new worker give the grade's answers to the example's requests (None: unknown)?"""


def settle(
    shown: Shown, student: FreshRuns, reference: FreshRuns | ReferenceRuns, alike: Alike
) -> bool:
    """Make ``shown``'s example one that replays, or say why none does. True when the
    failure depends on state kept between calls."""
    snippet = shown.outcome.snippet
    expected = reference.run([snippet])
    if expected is None or expected.raised:
        return False  # no expected output to compare with: the example stands
    alone = student.run([snippet])
    if alone is None or not alone.same(expected):
        return False
    if alike(shown) is not False:
        shown.outcome.details = [*shown.outcome.details, PRINTS_ALIKE_NOTE]
        return False
    outcome = shown.outcome
    for count in sorted({min(c, len(shown.earlier)) for c in EARLIER} - {0}):
        sources = [*shown.earlier[:count], snippet]
        if goes_wrong(student.run(sources), expected) and goes_wrong(
            student.run(sources, keep=True), expected
        ):
            outcome.snippet = sequence(shown.earlier[:count], snippet)
            outcome.details = [*outcome.details, SEQUENCE_NOTE.format(count=count)]
            return True
    outcome.details = [*outcome.details, STATE_NOTE]
    return True


def replay_shown(
    shown: Sequence[Shown],
    student: FreshRuns,
    reference: FreshRuns | ReferenceRuns,
    alike: Alike,
) -> None:
    """Each item's first shown failure is replayed; where it depends on state, so are the
    item's other failures."""
    by_item: dict[str, list[Shown]] = {}
    for one in shown:
        by_item.setdefault(one.outcome.item, []).append(one)
    for failures in by_item.values():
        first, *others = failures
        if settle(first, student, reference, alike):
            for other in others:
                settle(other, student, reference, alike)


def preloaded(session: GradingSession, shown: Shown) -> tuple[str, ...]:
    """What the student's fresh interpreter imports before its runs: numpy for a tensor
    engine, nothing for a scalar one (which starts 65 ms sooner without it)."""
    own = session.profile.assignments.get(shown.outcome.item.split(".")[0])
    return ("numpy",) if own is not None and own.kind == "tensor" else ()


class Replayer:
    """A grade's shown failures, replayed at its end against its submission and reference
    (none: nothing to compare with, every example stands). The submission's process starts at
    the first failure shown, so its interpreter starts up while the grade goes on."""

    def __init__(self, session: GradingSession) -> None:
        self.session = session
        self.shown: list[Shown] = []
        self._runs: tuple[FreshRuns, ReferenceRuns] | None = None

    def add(self, shown: Shown) -> None:
        session = self.session
        if session.reference_dir is None:
            return
        if self._runs is None:
            self._runs = (
                FreshRuns(session, session.submission, RUN_SECONDS, preloaded(session, shown)),
                ReferenceRuns(session.reference_dir, RUN_SECONDS),
            )
            for runs in self._runs:
                runs.start()
        self.shown.append(shown)

    def finish(self) -> None:
        if self._runs is None:
            return
        student, reference = self._runs
        try:
            replay_shown(
                self.shown,
                student,
                reference,
                lambda one: answered_alike(self.session, one.outcome.item, one.answered),
            )
        finally:
            student.close()
            reference.close()
