"""The pytest plugin: rubric markers to items to scores. Inert unless ``--grader-submission``.

Registered through the ``pytest11`` entry point; the grading run loads it explicitly with
``-p grader.grading.plugin`` and plugin autoloading off, so nothing else (least of all a
submission's conftest) can rewrite a report. It runs in the trusted process: student code
never does. The run's state (``GradingRun``) lives in ``config.stash``.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.strategies import SearchStrategy

from grader.atomic import write_atomically
from grader.checks.session import GradingSession, NotGradable, until
from grader.grading import course
from grader.grading import rubric as rubric_module
from grader.grading.draws import without_local_constants
from grader.grading.options import add_pytest_options, from_pytest
from grader.grading.prng import without_prng_resets
from grader.grading.replay import Diverged, Recordings, follow, recording
from grader.grading.reproduce import Replayer, Shown, shows_example
from grader.grading.scoring import NOT_GRADABLE, TestOutcome, score_items
from grader.grading.strata import drawn_count, explicit
from grader.language.editions import Edition
from grader.language.profiles import Profile
from grader.language.verdicts import WrongAnswer
from grader.oracles import reference
from grader.sandbox.launch import Limits

PHASES = (Phase.explicit, Phase.generate, Phase.shrink)
"""No example database to reuse, and no "explain" phase: its extra runs of a failing example
about double the time to grade a failing item, for notes the feedback does not show."""
VERDICT_PHASES = (Phase.explicit, Phase.generate)
"""``--verdicts-only``: a failing test fails at its first counterexample, unshrunk."""
MIN_EXAMPLES = 3
"""A grading test that shares its item's examples with others still draws at least this many."""


@dataclass
class GradingRun:
    """One grading run of one submission: what the hooks share, kept in ``config.stash``."""

    rubric: rubric_module.Rubric
    session: GradingSession
    seed: int
    assignments: set[str]
    only: tuple[str, ...]
    outcomes: list[TestOutcome] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    editions: dict[str, Edition] = field(default_factory=dict)
    """The items the submission's edition does not have (``Profile.as_uploaded``), with it."""
    recordings: Recordings | None = None
    """Where tests' runs are recorded for replay (``--grader-replay``), or None."""
    verdicts_only: bool = False
    """``--verdicts-only``: counterexamples neither shrunk nor run afresh."""
    examples: dict[str, int] = field(default_factory=dict)
    """Each Hypothesis test's number of examples, by node id (part of its recording's key)."""
    bodies: dict[str, Callable[..., None]] = field(default_factory=dict)
    """Each Hypothesis test's body as written, by node id: what a replay calls."""
    strata: dict[str, tuple[Callable[..., None], list[dict[str, Any]]]] = field(
        default_factory=dict
    )
    """A stratified test's body and explicit examples, by node id (``grader.grading.strata``):
    run once its drawn examples pass."""
    replayer: Replayer = field(init=False)
    """Runs the examples the feedback shows afresh before it shows them."""

    def __post_init__(self) -> None:
        self.replayer = Replayer(self.session)


RUN = pytest.StashKey[GradingRun]()


def _run(config: pytest.Config) -> GradingRun | None:
    return config.stash.get(RUN, None)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grader", "autograd grading")
    add_pytest_options(group)
    group.addoption("--grader-results", help="where the trusted results JSON goes")


def pytest_configure(config: pytest.Config) -> None:
    """At start-up: register the marker and, in a grading run, fix how examples are drawn
    (``grader.grading.draws``) and drop the random generators' reset around each one
    (``grader.grading.prng``), load the rubric and open the session (the worker starts on the
    first probe)."""
    config.addinivalue_line(
        "markers",
        "rubric(item, weight=1.0, share=1, needs=()): the rubric item a grading test counts "
        "towards, and what of a course's API it needs (grader.language.profiles)",
    )
    options = from_pytest(config)
    if options is None:
        return
    without_local_constants()
    without_prng_resets()
    try:
        rubric = rubric_module.load(options.rubric)
    except rubric_module.RubricError as exc:
        raise pytest.UsageError(str(exc)) from None
    profile = rubric.profile.as_uploaded(options.submission)
    course.use(profile)
    session = GradingSession(
        submission=options.submission,
        tolerances=rubric.tolerances,
        reference_dir=options.reference,
        use_torch=options.torch,
        sandbox=options.sandbox,
        slot=options.slot,
        limits=Limits(memory_mb=options.memory_mb),
        profile=profile,
        budgets={item.id: item.timeout for item in rubric.items},
        import_budget=options.import_budget,
        import_budgets=rubric.import_budgets,
    )
    run_seed = rubric.seed if options.seed is None else options.seed
    recordings = (
        Recordings.open(
            str(options.replay),
            rubric.digest + profile.editions + " verdicts only" * options.verdicts_only,
            run_seed,
        )
        if options.replay
        else None
    )
    if recordings is not None and recordings.folder is not None:
        # from disk: a lane's runs have them in its memory instead
        reference.load_answers(reference.answers_beside(recordings.folder))
    config.stash[RUN] = GradingRun(
        rubric=rubric,
        session=session,
        seed=run_seed,
        assignments={options.assignment},
        only=options.only,
        recordings=recordings,
        verdicts_only=options.verdicts_only,
    )


def graded(item_id: str, weight: float = 1.0, share: int = 1, needs: tuple[str, ...] = ()) -> Any:
    """Mark a grading test with its rubric item. ``share``: how many tests of the item (one per
    op) split the rubric's number of examples between them. ``needs``: what of the course's
    API it grades (``AssignmentProfile.has``: an op, ``walk.topo``, ``walk.nested``,
    ``walk.zero_grad``): a profile without it does not run it. The run's Hypothesis settings
    are applied at collection (``pytest_collection_modifyitems``), where the run is known."""
    return pytest.mark.rubric(item_id, weight=weight, share=share, needs=needs)


def graded_property(
    item_id: str,
    name: str,
    strategy: SearchStrategy[Any],
    check: Callable[[GradingSession, Any], None],
    share: int = 1,
    needs: tuple[str, ...] = (),
    strata: Callable[[Any], Any] | None = None,
) -> Any:
    """A grading test called ``name`` for a suite's namespace: each example drawn from
    ``strategy`` goes to ``check(grading, example)`` (for the one-test-per-op items).
    ``strata``: a ``grader.grading.strata.stratified`` mark, its examples named ``example``."""

    def test(grading: GradingSession, example: Any) -> None:
        check(grading, example)

    test.__name__ = test.__qualname__ = name
    drawn = given(strategy)(test)
    return graded(item_id, share=share, needs=needs)(strata(drawn) if strata else drawn)


@pytest.fixture(scope="session")
def grading(request: pytest.FixtureRequest) -> GradingSession:
    """The run's session, for the grading tests to hand to the checks."""
    run = _run(request.config)
    if run is None:
        pytest.skip("not a grading run (no --grader-submission)")
    return run.session


def _apply_settings(test: pytest.Function, run: GradingRun, examples: int) -> None:
    """``draw_settings``, and the test's recording where the run replays."""
    function = test.obj
    if not getattr(function, "is_hypothesis_test", False):
        return
    cases = explicit(function)
    examples = draw_settings(
        function,
        run.seed,
        drawn_count(len(cases), examples, MIN_EXAMPLES),
        VERDICT_PHASES if run.verdicts_only else PHASES,
    )
    if cases:
        run.strata[test.nodeid] = (function.hypothesis.inner_test, cases)
    if run.recordings is not None:
        body = function.hypothesis.inner_test
        run.examples[test.nodeid], run.bodies[test.nodeid] = examples, body
        function.hypothesis.inner_test = recording(
            body, run.recordings, set(test._fixtureinfo.argnames), run.session.asked
        )


def draw_settings(
    function: Any, run_seed: int, examples: int, phases: tuple[Phase, ...] = PHASES
) -> int:
    """``examples`` to draw, a seed from the run's seed and the test's name, no database, no
    timing health checks: the same submission draws the same examples."""
    settings(
        max_examples=examples,
        derandomize=False,
        database=None,
        deadline=None,
        print_blob=False,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )(function)
    seed((run_seed + zlib.crc32(function.__name__.encode())) % (1 << 32))(function)
    return examples


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After collection: every grading test names a rubric item and every item of the graded
    assignments has a test; tests of items ``--grader-only`` leaves out are deselected; each
    kept test gets the run's Hypothesis settings."""
    run = _run(config)
    if run is None:
        return
    rubric = run.rubric
    tested: set[str] = set()
    keep, drop = [], []
    for test in items:
        marker = test.get_closest_marker("rubric")
        if marker is None:
            raise pytest.UsageError(
                f"grading test {test.nodeid} names no rubric item: "
                "decorate it with @graded('<item id>')"
            )
        item_id = _item_id(test, run)
        needs = marker.kwargs.get("needs", ())
        if item_id is None or not in_profile(run.session.profile, item_id, needs):
            edition = _lacking_edition(run, item_id, needs)
            if edition is not None:
                run.editions[item_id] = edition  # type: ignore[index]
            drop.append(test)
            continue
        if item_id not in rubric.by_id:
            raise pytest.UsageError(
                f"grading test {test.nodeid} names {item_id!r}, which is not in {rubric.path}"
            )
        tested.add(item_id)
        if not rubric_module.selected(item_id, run.only):
            drop.append(test)
            continue
        keep.append(test)
        share = int(marker.kwargs.get("share", 1))
        _apply_settings(test, run, examples_per_test(rubric.by_id[item_id].examples, share))  # type: ignore[arg-type]
    for item_id in tested:
        run.editions.pop(item_id, None)  # some of its tests are in the edition
    untested = [
        i.id
        for i in rubric.for_assignments(run.assignments)
        if i.id not in tested and i.id not in run.editions
    ]
    if untested:
        raise pytest.UsageError(
            f"{rubric.path}: item(s) {', '.join(untested)} have no grading test "
            f"for the API of the profile {rubric.profile.name}"
        )
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def examples_per_test(item_examples: int, share: int) -> int:
    """A test's part of its item's examples (``share`` tests split them)."""
    return max(MIN_EXAMPLES, -(-item_examples // share))


def _item_id(test: pytest.Item, run: GradingRun) -> str | None:
    """The rubric item a grading test counts towards, as the run's course names it (the
    suites mark them in this course's words: ``Profile.item_id``); None: the course has no
    such item, and the test does not run."""
    return run.rubric.profile.item_id(test.get_closest_marker("rubric").args[0])


def _lacking_edition(
    run: GradingRun, item_id: str | None, needs: tuple[str, ...]
) -> Edition | None:
    """The submission's edition, where a test the course's profile runs does not run only
    because that edition lacks what it needs, or the upload kept it as the course gives it."""
    if item_id is None or not in_profile(run.rubric.profile, item_id, needs):
        return None
    edition = run.session.profile.of(item_id.split(".", 1)[0]).edition
    return None if edition is None else edition.because(needs)


def in_profile(profile: Profile, item_id: str, needs: tuple[str, ...]) -> bool:
    """Does the course's API have all a test of ``item_id`` needs?"""
    assignment = item_id.split(".", 1)[0]
    return assignment not in profile.assignments or all(
        profile.of(assignment).has(need) for need in needs
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Around each grading test: tell the session which item and test are running, for the
    item's time budget and for recording aborts and failures against the right test."""
    run = _run(item.config)
    if run is not None:
        run.session.current_item = _item_id(item, run)
        run.session.current_test = item.nodeid
    return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Instead of a Hypothesis run: the test's recorded runs, as long as its outcomes follow
    one of them to its end (then the test passes, or fails with the verdict that run reported,
    as Hypothesis would have: see ``replay``). Otherwise nothing the replay did counts, and
    Hypothesis runs, recording what it draws."""
    run = _run(pyfuncitem.config)
    if run is None or run.recordings is None or pyfuncitem.nodeid not in run.bodies:
        return None
    runs = run.recordings.load(pyfuncitem.nodeid, run.examples[pyfuncitem.nodeid])
    if runs:
        mark = run.session.checkpoint()
        try:
            failure = follow(runs, _attempt(pyfuncitem, run), run.session.plan)
        except (Diverged, pytest.skip.Exception, pytest.fail.Exception):
            run.session.rewind(mark)
        else:
            run.session.plan([])
            if failure is not None:
                raise failure
            return True
    run.recordings.start()
    return None


@pytest.hookimpl(wrapper=True, specname="pytest_pyfunc_call")
def pytest_pyfunc_call_strata(pyfuncitem: pytest.Function) -> Generator[None, Any, Any]:
    """Once a stratified test's drawn examples (or their replay) pass: its explicit examples,
    each on the test's body, the first that fails failing the test. (pytest takes a hook only
    by a name that starts with ``pytest_``; ``specname`` says which hook it is.)"""
    result = yield
    run = _run(pyfuncitem.config)
    if run is not None and pyfuncitem.nodeid in run.strata:
        body, cases = run.strata[pyfuncitem.nodeid]
        fixtures = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
        for case in cases:
            body(**fixtures, **case)
    return result


def _attempt(
    test: pytest.Function, run: GradingRun
) -> Callable[[dict[str, Any]], Exception | None]:
    """The test's body on one example: the exception it raised, or None (it passed)."""
    body = run.bodies[test.nodeid]
    fixtures = {name: test.funcargs[name] for name in test._fixtureinfo.argnames}

    def attempt(example: dict[str, Any]) -> Exception | None:
        try:
            body(**fixtures, **example)
        except Exception as failure:  # noqa: BLE001 - an outcome, compared with the recorded
            return failure
        return None

    return attempt


def _grade_failure(exc: BaseException | None) -> WrongAnswer | None:
    """The verdict a test raised, also from inside an exception group."""
    if isinstance(exc, WrongAnswer):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _grade_failure(inner)
            if found is not None:
                return found
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """After each test phase: turn the report into the item's outcome (the verdict, an abort's
    status and reason, or an internal error that must not count against the student)."""
    report = yield
    run = _run(item.config)
    if run is None or report.when not in ("setup", "call"):
        return report
    session = run.session
    if report.when == "setup" and report.passed:
        return report
    marker = item.get_closest_marker("rubric")
    outcome = TestOutcome(
        item=_item_id(item, run),
        name=item.name,
        weight=float(marker.kwargs.get("weight", 1.0)),
        passed=report.passed,
    )
    abort = session.aborts.pop(item.nodeid, None)
    raised = call.excinfo.value if call.excinfo else None
    failure = _grade_failure(raised)
    if abort is not None:
        outcome.passed, outcome.status, outcome.reason = False, abort.status, abort.reason
        report.outcome, report.longrepr = "failed", f"{abort.status}: {abort.reason}"
        failure = abort.failure  # a failing test stopped while shrinking reports its failure
    elif isinstance(raised, NotGradable):  # reported as skipped; scored as not counting
        outcome.status, outcome.reason = NOT_GRADABLE, until(raised.needs)
        outcome.needs = list(raised.needs)
    elif failure is None and report.failed:
        run.internal_errors.append(f"{item.nodeid}: {call.excinfo.exconly()[:500]}")
        outcome.status, outcome.reason = "error", "internal grader error (not your fault)"
    if failure is not None:
        outcome.status, outcome.reason = failure.status, failure.reason
        outcome.details, outcome.snippet, outcome.bugs = (
            failure.details,
            failure.snippet,
            failure.bugs,
        )
        outcome.figure = failure.figure
    if shows_example(outcome) and not run.verdicts_only:
        examples = session.examples.get(item.nodeid)
        answered = session.failed_calls.get(item.nodeid, {}).get(outcome.snippet, [])
        run.replayer.add(Shown(outcome, examples.before_last if examples else [], answered))
    if run.recordings is not None and report.when == "call":
        if abort is None and (report.passed or failure is not None):
            run.recordings.save(item.nodeid, run.examples.get(item.nodeid, 0), failure)
        run.recordings.current = None
    run.outcomes.append(outcome)
    return report


NOT_IMPORTED = "the engine could not be imported"
DEMO_FIX = (
    "Code at the top level of a module runs when the grader imports it: put demos and "
    'training loops under `if __name__ == "__main__":`.'
)


def import_failure_line(status: str, reason: str) -> str:
    """One line for an engine that could not be imported, with the fix for code that runs too
    long at import (every test of the assignment stopped at the same place)."""
    fix = f" {DEMO_FIX}" if status == "timeout" else ""
    return f"{NOT_IMPORTED} ({reason}).{fix}"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """At the end: stop the worker, score every selected item (one no test reached says so:
    ``scoring.NEVER_RAN``, which the parent takes for no grade) and write the results file,
    atomically, for the parent process."""
    run = _run(session.config)
    if run is None:
        return
    grading = run.session
    grading.close()
    run.replayer.finish()
    if run.recordings is not None and run.recordings.folder is not None:
        reference.keep_answers(reference.answers_beside(run.recordings.folder))
    items = run.rubric.selected_items(run.assignments, run.only)
    results = score_items(run.rubric, items, run.outcomes, run.editions)
    not_importable = {
        assignment: import_failure_line(*grading.import_failures[assignment])
        for assignment in run.assignments
        if assignment in grading.import_failures
    }
    for result in results:
        if result.assignment in not_importable:
            result.feedback, result.figure = not_importable[result.assignment], None
    payload = {
        "items": [r.to_json() for r in results],
        "not_importable": not_importable,
        "outcomes": [asdict(o) for o in run.outcomes],
        "oracles": grading.oracles.names,
        "protections": grading.protections,
        "internal_errors": run.internal_errors,
        "oracle_disagreements": grading.oracles.disagreements,
        "checks": grading.checks,
    }
    target = session.config.getoption("--grader-results")
    if target:
        write_atomically(Path(target), json.dumps(payload, indent=1))
