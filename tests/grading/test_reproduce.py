"""Snippets that replay: a fresh interpreter per run (``grader.worker.fresh``), the numbers the
parent reads of it (``grader.checks.fresh``), and which example the feedback shows
(``grader.grading.reproduce``)."""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from grader.checks.fresh import (
    FreshRuns,
    Printed,
    ReferenceRuns,
    answered_alike,
    printed_values,
)
from grader.checks.session import FIRST_EXAMPLES, Examples, GradingSession
from grader.grading import rubric as rubric_module
from grader.grading import scoring
from grader.grading.reproduce import (
    PRINTS_ALIKE_NOTE,
    SEQUENCE_NOTE,
    STATE_NOTE,
    Shown,
    preloaded,
    replay_shown,
    sequence,
)
from grader.language.dags import diamonds
from grader.layout import DEFAULT_RUBRIC
from grader.sandbox.launch import Limits
from grader.worker import probes
from grader.worker.engines import isolated, load_engine
from grader.worker.protocol import Probe
from tests.helpers.grading import REFERENCE

COUNTER = (
    "calls = []\nseen = set()\n\n\ndef count():\n    calls.append(1)\n    return len(calls)\n"
    "\n\ndef first_time(obj):\n    new = id(obj) not in seen\n    seen.add(id(obj))\n"
    "    return new\n"
)
"""An engine that keeps state between calls: a count, and the ids it was given."""
COUNT = "from micrograd.engine import count\nprint(count())"


@pytest.fixture
def fresh_runs(tmp_path: Path) -> Iterator[Callable[[float], FreshRuns]]:
    """Fresh runs against an engine that counts its calls, with a deadline per run."""
    engine = tmp_path / "submission" / "micrograd"
    engine.mkdir(parents=True)
    (engine / "__init__.py").write_text("")
    (engine / "engine.py").write_text(COUNTER)
    settings = SimpleNamespace(
        submission=engine.parent, reference_dir=None, slot=0, limits=Limits(), sandbox="auto"
    )
    made: list[FreshRuns] = []

    def make(seconds: float) -> FreshRuns:
        made.append(FreshRuns(settings, engine.parent, seconds))
        return made[-1]

    yield make
    for runs in made:
        runs.close()


@pytest.fixture
def runs(fresh_runs: Callable[[float], FreshRuns]) -> FreshRuns:
    return fresh_runs(20.0)


def test_printed_values_are_the_numbers_and_nothing_else():
    text = "[Value(data=1.5, grad=-2e-3), n0 <Value at 0x7f00ab>] None nan -inf 3. True"
    values = printed_values(text)
    assert values[:3] == [1.5, -0.002, None]
    assert math.isnan(values[3]) and values[4:] == [-math.inf, 3.0, 1.0]


def test_two_outcomes_are_the_same_to_print_precision_and_nesting():
    assert not Printed((1.0, 1.0), False, "[[]]").same(Printed((1.0, 1.0), False, "[[][]]"))
    assert Printed((1.0, None), False).same(Printed((1.0 + 1e-9, None), False))
    assert not Printed((1.0, None), False).same(Printed((None, 1.0), False))
    assert not Printed((1.0,), False).same(Printed((1.0, 2.0), False))
    assert not Printed((1.0,), True).same(Printed((1.0,), False))
    assert Printed((), True).same(Printed((1.0,), True))


def test_each_run_starts_afresh_and_its_examples_share_one_interpreter(runs):
    assert runs.run([COUNT]) == Printed((1.0,), False)
    assert runs.run([COUNT]) == Printed((1.0,), False)
    assert runs.run([COUNT, COUNT, COUNT]) == Printed((3.0,), False)


FIRST = "from micrograd.engine import first_time\nx = [0.0]\nprint(first_time(x))"
AGAIN = "del x\nx = [0.0]\nprint(first_time(x))"
"""The earlier list freed, a new one takes its memory and so its id (CPython's list free
list gives back the one freed last)."""


def test_a_run_that_keeps_frees_nothing_an_earlier_example_made(runs):
    assert runs.run([FIRST, AGAIN]) == Printed((0.0,), False)  # the id came back
    assert runs.run([FIRST, AGAIN], keep=True) == Printed((1.0,), False)
    assert runs.run([FIRST, AGAIN]) == Printed((0.0,), False)  # the next run does not keep


def test_a_run_that_raises_or_crashes(runs):
    assert runs.run([COUNT, "print(1)\nraise ValueError('no')"]) == Printed((1.0,), True)
    assert runs.run(["raise ValueError('no')", COUNT]) is None  # stopped before the last
    assert runs.run(["import os\nos._exit(3)"]) is None
    assert runs.run([COUNT]) == Printed((1.0,), False)


def test_a_run_that_hangs_says_nothing_and_the_next_runs(fresh_runs):
    runs = fresh_runs(2.0)
    assert runs.run(["while True:\n    pass"]) is None
    assert runs.run(["print(1)"]) == Printed((1.0,), False)


LOADED = "import sys\nprint([int(m in sys.modules) for m in ('numpy', 'grader.worker.probes')])"
"""Whether the interpreter a run forks from had numpy, and the grader's probes, imported."""


@pytest.mark.parametrize(
    ("preload", "loaded"), [((), (0.0, 0.0)), (("numpy",), (1.0, 0.0))], ids=["scalar", "tensor"]
)
def test_a_fresh_interpreter_starts_with_numpy_for_a_tensor_engine_alone(tmp_path, preload, loaded):
    """A scalar engine's snippets need nothing imported beforehand; a tensor engine's import
    numpy in every run, so their interpreter has it once for all. Neither has the probes."""
    settings = SimpleNamespace(
        submission=REFERENCE, reference_dir=None, slot=0, limits=Limits(), sandbox="auto"
    )
    runs = FreshRuns(settings, REFERENCE, 20.0, preload)
    try:
        assert runs.run([LOADED]) == Printed(loaded, False, "[]")
    finally:
        runs.close()


def test_the_student_interpreter_preloads_numpy_for_the_tensor_assignment_only():
    session = SimpleNamespace(profile=rubric_module.load(DEFAULT_RUBRIC).profile)

    def shown(item: str) -> Shown:
        return SimpleNamespace(outcome=SimpleNamespace(item=item))  # type: ignore[return-value]

    assert preloaded(session, shown("babygrad.graphs")) == ("numpy",)  # type: ignore[arg-type]
    assert preloaded(session, shown("micrograd.ops.tanh")) == ()  # type: ignore[arg-type]


TANH = "from micrograd.engine import Value\nx = Value(0.5)\ny = x.tanh()\ny.backward()\n"
TANH += "print(y, x.grad)"


def test_the_reference_runs_in_a_fork_as_in_a_fresh_sandboxed_interpreter(tmp_path):
    """The reference's runs fork this trusted process, which has its engine loaded (as the
    reference oracle has), and even changed: each run imports it from its folder afresh and
    prints what a sandboxed fresh interpreter prints, state and all."""
    settings = SimpleNamespace(
        submission=REFERENCE, reference_dir=None, slot=0, limits=Limits(), sandbox="auto"
    )
    sandboxed = FreshRuns(settings, REFERENCE, 20.0)
    try:
        expected = sandboxed.run([TANH])
    finally:
        sandboxed.close()
    assert expected is not None and len(expected.values) >= 2 and not expected.raised
    with isolated(REFERENCE, "micrograd"):
        importlib.import_module("micrograd.engine").Value.tanh = lambda self: self
        runs = ReferenceRuns(REFERENCE, 20.0)
        assert runs.run([TANH]) == expected
        assert runs.run([TANH, TANH], keep=True) == expected
    counter = tmp_path / "counter" / "micrograd"
    counter.mkdir(parents=True)
    (counter / "__init__.py").write_text("")
    (counter / "engine.py").write_text(COUNTER)
    counting = ReferenceRuns(counter.parent, 20.0)
    assert counting.run([COUNT, COUNT]) == Printed((2.0,), False)
    assert counting.run([COUNT]) == Printed((1.0,), False)  # nothing kept from the run before


class _Namespace:
    """What PyTorch keeps in ``sys.modules`` beside its modules: every attribute is another."""

    def __getattr__(self, name: str) -> _Namespace:
        return _Namespace()


def test_a_reference_run_reads_past_what_is_in_sys_modules_but_no_module(monkeypatch):
    lazy = ModuleType("lazy")
    lazy.__getattr__ = lambda name: (_ for _ in ()).throw(RuntimeError(f"imported {name}"))
    monkeypatch.setitem(sys.modules, "namespace", _Namespace())
    monkeypatch.setitem(sys.modules, "lazy", lazy)
    assert ReferenceRuns(REFERENCE, 20.0).run(["print(1)"]) == Printed((1.0,), False)


def test_a_reference_run_that_hangs_or_exits_says_nothing(tmp_path):
    runs = ReferenceRuns(REFERENCE, 1.0)
    assert runs.run(["while True:\n    pass"]) is None
    assert runs.run(["import os\nos._exit(3)"]) is None
    assert runs.run(["print(1)"]) == Printed((1.0,), False)


def test_a_runs_deadline_is_cpu_time_so_load_decides_nothing(fresh_runs):
    """A run that waits longer than its seconds without computing (as a run on a loaded machine
    waits for a core) still answers; one that computes past them is stopped."""
    runs = fresh_runs(1.0)
    assert runs.run(["import time\ntime.sleep(2.5)\nprint(1)"]) == Printed((1.0,), False)
    assert runs.run(["while True:\n    pass"]) is None


def test_a_run_cannot_write_on_the_parents_channel(runs):
    forged = "import os\nos.write(4, b'{}')"
    assert runs.run([forged]) == Printed((), True)
    assert runs.run([COUNT]) == Printed((1.0,), False)


def test_examples_kept_are_the_first_and_exclude_the_last():
    few = Examples()
    for snippet in ["a", "a", "b", "c"]:
        few.add(snippet)
    assert (few.first, few.before_last) == (["a", "b", "c"], ["a", "b"])
    many = Examples()
    for n in range(FIRST_EXAMPLES + 3):
        many.add(str(n))
    assert many.before_last == [str(n) for n in range(FIRST_EXAMPLES)]


class Stub:
    """Runs answered by a function of the examples run, each run remembered."""

    def __init__(
        self,
        answer: Callable[[list[str]], Printed | None],
        kept: Callable[[list[str]], Printed | None] | None = None,
    ) -> None:
        self.answer, self.kept = answer, kept or answer
        self.runs: list[list[str]] = []
        self.keeps: list[bool] = []

    def run(self, sources: list[str], keep: bool = False) -> Printed | None:
        self.runs.append(sources)
        self.keeps.append(keep)
        return (self.kept if keep else self.answer)(sources)


RIGHT, WRONG = Printed((1.0,), False), Printed((2.0,), False)


def stateful(one: Shown) -> bool:
    """A new worker answers otherwise than the grade's: the failure needs earlier calls."""
    return False


EARLIER = ["e1", "e2", "e3"]


def shown(item: str = "micrograd.topo", snippet: str = "failing") -> Shown:
    outcome = scoring.TestOutcome(item, "test", 1.0, False, "failed", "wrong", ["detail"], snippet)
    return Shown(outcome, list(EARLIER))


def test_an_example_that_goes_wrong_alone_stands_and_is_the_only_one_run():
    first, second = shown(), shown(snippet="other")
    student = Stub(lambda sources: WRONG)
    replay_shown([first, second], student, Stub(lambda sources: RIGHT), stateful)
    assert (first.outcome.snippet, first.outcome.details) == ("failing", ["detail"])
    assert student.runs == [["failing"]]


def test_an_example_right_alone_is_shown_after_the_fewest_earlier_examples_tried():
    first, second = shown(), shown(snippet="other")
    student = Stub(lambda sources: WRONG if len(sources) >= 3 else RIGHT)
    replay_shown([first, second], student, Stub(lambda sources: RIGHT), stateful)
    for one in (first, second):
        assert one.outcome.snippet == sequence(EARLIER[:2], one.outcome.snippet.split("\n")[-1])
        assert one.outcome.details == ["detail", SEQUENCE_NOTE.format(count=2)]
    assert [len(run) for run in student.runs] == [1, 2, 3, 3, 1, 2, 3, 3]
    assert student.keeps == [False, False, False, True] * 2  # the sequence shown, kept


def test_a_sequence_that_goes_wrong_only_when_earlier_objects_are_freed_is_not_shown():
    """Wrong after the earlier examples, right when nothing they made is freed: a new object
    took an earlier one's id, which a student's interpreter may or may not do."""
    one = shown()
    student = Stub(lambda sources: WRONG if len(sources) >= 2 else RIGHT, lambda sources: RIGHT)
    replay_shown([one], student, Stub(lambda sources: RIGHT), stateful)
    assert (one.outcome.snippet, one.outcome.details) == ("failing", ["detail", STATE_NOTE])
    assert [(len(run), keep) for run, keep in zip(student.runs, student.keeps, strict=True)] == [
        (1, False),
        (2, False),
        (2, True),
        (3, False),
        (3, True),
        (4, False),
        (4, True),
    ]


def test_an_example_right_after_every_sequence_tried_carries_the_state_note():
    one = shown()
    replay_shown([one], Stub(lambda sources: RIGHT), Stub(lambda sources: RIGHT), stateful)
    assert (one.outcome.snippet, one.outcome.details) == ("failing", ["detail", STATE_NOTE])


@pytest.mark.parametrize("alike", [True, None], ids=["answered-alike", "unknown"])
def test_an_example_that_fails_afresh_all_the_same_stands_and_says_it_prints_alike(alike):
    """Right alone, yet a new worker gives the grade's answers (or cannot tell): the example
    does not print what went wrong, and says so (a student who runs it sees the reference's
    output); nothing says state is to blame."""
    first, second = shown(), shown(snippet="other")
    student = Stub(lambda sources: RIGHT)
    replay_shown([first, second], student, Stub(lambda sources: RIGHT), lambda one: alike)
    assert (first.outcome.snippet, first.outcome.details) == (
        "failing",
        ["detail", PRINTS_ALIKE_NOTE],
    )
    assert (second.outcome.snippet, second.outcome.details) == ("other", ["detail"])
    assert student.runs == [["failing"]]


@pytest.mark.parametrize("reference", [None, Printed((), True)], ids=["no-answer", "raised"])
def test_without_an_expected_output_the_example_stands(reference):
    one = shown()
    student = Stub(lambda sources: RIGHT)
    replay_shown([one], student, Stub(lambda sources: reference), stateful)
    assert (one.outcome.snippet, one.outcome.details, student.runs) == ("failing", ["detail"], [])


def test_a_new_worker_tells_whether_the_grades_answers_need_earlier_calls():
    """The failing check's requests asked again of a new worker: the same answers (the
    failure does not need what came before it), or others (it does)."""
    grading = GradingSession(submission=REFERENCE, tolerances={}, use_torch=False)
    case = {"dag": diamonds(2).to_json()}
    right = probes.probe_topo(load_engine(REFERENCE, "micrograd"), case)
    request = ("micrograd", Probe.TOPO, case)
    assert answered_alike(grading, "micrograd.topo", [(request, {"ok": right})]) is True
    wrong = {"ok": {"order": right["order"][-1:]}}
    assert answered_alike(grading, "micrograd.topo", [(request, wrong)]) is False
    assert answered_alike(grading, "micrograd.topo", []) is None
