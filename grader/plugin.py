"""The pytest plugin: rubric markers to items to scores. Inert unless ``--grader-submission``.

Registered through the ``pytest11`` entry point; the grading run loads it explicitly with
``-p grader.plugin`` and plugin autoloading off, so nothing else (least of all a submission's
conftest) can rewrite a report. It runs in the trusted process: student code never does.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Generator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.strategies import SearchStrategy

from grader import rubric as rubric_module
from grader.atomic import write_atomically
from grader.judge import GradeFailure
from grader.scoring import TestOutcome, score_items
from grader.session import GradingSession
from grader.worker.launch import Limits

_state: dict[str, Any] = {}
PHASES = (Phase.explicit, Phase.generate, Phase.shrink)
"""No example database to reuse, and no "explain" phase: its extra runs of a failing example
about double the time to grade a failing item, for notes the feedback does not show."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grader", "autograd grading")
    group.addoption("--grader-submission", help="folder holding the submission to grade")
    group.addoption("--grader-rubric", help="rubric.yaml to grade against")
    group.addoption("--grader-assignment", action="append", default=[],
                    help="assignment whose items this run grades (repeatable)")
    group.addoption("--grader-seed", type=int, help="seed overriding the rubric's")
    group.addoption("--grader-results", help="where the trusted results JSON goes")
    group.addoption("--grader-reference", help="reference solutions folder (optional)")
    group.addoption("--grader-no-torch", action="store_true",
                    help="never use PyTorch as an oracle, even where it is installed")
    group.addoption("--grader-sandbox", default="auto", choices=["auto", "bwrap", "none"])
    group.addoption("--grader-slot", type=int, default=0, help="worker uid slot")
    group.addoption("--grader-memory-mb", type=int, default=Limits().memory_mb,
                    help="the worker's address-space limit")
    group.addoption("--grader-only", action="append", default=[],
                    help="grade only items with this id or id prefix (repeatable)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rubric(item, weight=1.0): the rubric item a grading "
                                       "test counts towards")
    submission = config.getoption("--grader-submission", default=None)
    if not submission:
        return
    try:
        rubric = rubric_module.load(Path(config.getoption("--grader-rubric")))
    except rubric_module.RubricError as exc:
        raise pytest.UsageError(str(exc)) from None
    base_seed = config.getoption("--grader-seed")
    reference = config.getoption("--grader-reference")
    session = GradingSession(
        submission=Path(submission),
        tolerances=rubric.tolerances,
        reference_dir=Path(reference) if reference else None,
        use_torch=not config.getoption("--grader-no-torch"),
        sandbox=config.getoption("--grader-sandbox"),
        slot=config.getoption("--grader-slot"),
        limits=Limits(memory_mb=config.getoption("--grader-memory-mb")),
        budgets={item.id: item.timeout for item in rubric.items},
    )
    _state.update(rubric=rubric, session=session, outcomes=[], internal_errors=[],
                  seed=rubric.seed if base_seed is None else base_seed,
                  assignments=set(config.getoption("--grader-assignment")),
                  only=config.getoption("--grader-only"))


MIN_EXAMPLES = 3
"""A grading test that shares its item's examples with others still draws at least this many."""


def graded(item_id: str, weight: float = 1.0, share: int = 1) -> Any:
    """Mark a grading test with its rubric item and apply the run's Hypothesis settings:
    the rubric's number of examples (split between the ``share`` tests of an item that has one
    test per op), the run's seed, no database, no timing health checks."""

    def decorate(test: Any) -> Any:
        rubric = _state.get("rubric")
        item = rubric.by_id.get(item_id) if rubric else None
        examples = max(MIN_EXAMPLES, -(-item.examples // share)) if item else 10
        run_seed = (_state.get("seed", 0) + zlib.crc32(test.__name__.encode())) % (1 << 32)
        if getattr(test, "is_hypothesis_test", False):
            test = settings(max_examples=examples, derandomize=False, database=None,
                            deadline=None, print_blob=False, phases=PHASES,
                            suppress_health_check=list(HealthCheck))(test)
            test = seed(run_seed)(test)
        return pytest.mark.rubric(item_id, weight=weight)(test)

    return decorate


def graded_property(item_id: str, name: str, strategy: SearchStrategy[Any],
                    check: Callable[[GradingSession, Any], None], share: int = 1) -> Any:
    """A grading test called ``name`` for a suite's namespace: each example drawn from
    ``strategy`` goes to ``check(grading, example)`` (for the one-test-per-op items)."""

    def test(grading: GradingSession, example: Any) -> None:
        check(grading, example)

    test.__name__ = test.__qualname__ = name
    return graded(item_id, share=share)(given(strategy)(test))


@pytest.fixture(scope="session")
def grading() -> Generator[GradingSession, None, None]:
    session = _state.get("session")
    if session is None:
        pytest.skip("not a grading run (no --grader-submission)")
    yield session


def _selected(item_id: str) -> bool:
    only = _state.get("only") or []
    return not only or any(item_id == o or item_id.startswith(o.rstrip(".") + ".")
                           for o in only)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "rubric" not in _state:
        return
    rubric = _state["rubric"]
    tested: set[str] = set()
    keep, drop = [], []
    for test in items:
        marker = test.get_closest_marker("rubric")
        if marker is None:
            raise pytest.UsageError(f"grading test {test.nodeid} names no rubric item: "
                                    "decorate it with @graded('<item id>')")
        item_id = marker.args[0]
        if item_id not in rubric.by_id:
            raise pytest.UsageError(f"grading test {test.nodeid} names {item_id!r}, which is "
                                    f"not in {rubric.path}")
        tested.add(item_id)
        (keep if _selected(item_id) else drop).append(test)
    untested = [i.id for i in rubric.for_assignments(_state["assignments"]) if i.id not in tested]
    if untested:
        raise pytest.UsageError(f"{rubric.path}: item(s) {', '.join(untested)} have no "
                                "grading test")
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    session = _state.get("session")
    if session is not None:
        session.current_item = item.get_closest_marker("rubric").args[0]
        session.current_test = item.nodeid
    return (yield)


def _grade_failure(exc: BaseException | None) -> GradeFailure | None:
    if isinstance(exc, GradeFailure):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _grade_failure(inner)
            if found is not None:
                return found
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    session = _state.get("session")
    if session is None or report.when not in ("setup", "call"):
        return report
    if report.when == "setup" and report.passed:
        return report
    marker = item.get_closest_marker("rubric")
    outcome = TestOutcome(item=marker.args[0], name=item.name,
                          weight=float(marker.kwargs.get("weight", 1.0)), passed=report.passed)
    abort = session.aborts.pop(item.nodeid, None)
    failure = _grade_failure(call.excinfo.value if call.excinfo else None)
    if abort is not None:
        outcome.passed, outcome.status, outcome.reason = False, abort.status, abort.reason
        report.outcome, report.longrepr = "failed", f"{abort.status}: {abort.reason}"
        failure = abort.failure  # a failing test stopped while shrinking reports its failure
    elif failure is None and report.failed:
        _state["internal_errors"].append(f"{item.nodeid}: {call.excinfo.exconly()[:500]}")
        outcome.status, outcome.reason = "error", "internal grader error (not your fault)"
    if failure is not None:
        outcome.status, outcome.reason = failure.status, failure.reason
        outcome.details, outcome.snippet, outcome.bugs = (failure.details, failure.snippet,
                                                           failure.bugs)
        outcome.figure = failure.figure
    _state["outcomes"].append(outcome)
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    grading = _state.get("session")
    if grading is None:
        return
    grading.close()
    rubric = _state["rubric"]
    items = [i for i in rubric.for_assignments(_state["assignments"]) if _selected(i.id)]
    results = score_items(rubric, items, _state["outcomes"])
    payload = {
        "items": [r.to_json() for r in results],
        "outcomes": [asdict(o) for o in _state["outcomes"]],
        "oracles": grading.oracles.names,
        "protections": grading.protections,
        "internal_errors": _state["internal_errors"],
        "oracle_disagreements": grading.oracles.disagreements,
        "checks": grading.checks,
    }
    target = session.config.getoption("--grader-results")
    if target:
        write_atomically(Path(target), json.dumps(payload, indent=1))

