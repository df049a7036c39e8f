"""Shared pytest fixtures, Ctrl-C for children, and the closing line about optional programs.

A module's costly fixture (a graded class, a built release) is session-scoped even where only
that module uses it: pytest-xdist may run another module's tests between two of its tests, and
a module-scoped fixture is then torn down and built again."""

import importlib
import signal
from collections import Counter
from pathlib import Path

import pytest
import yaml

from grader.checks.session import Aborted, NotGradable
from grader.grading import course
from grader.layout import DEFAULT_RUBRIC
from grader.worker.engines import isolated
from tests.helpers import memo, programs


def _import_isolated(root, name):
    """Import module ``name`` (e.g. "micrograd.engine") from directory ``root``, leaving no trace.

    reference/ and exercises/ both hold packages called ``micrograd`` and ``babygrad``: the
    import runs ``isolated`` from any copy already imported, as the reference oracle's does.
    """
    with isolated(Path(root).resolve(), name.split(".")[0]):
        return importlib.import_module(name)


@pytest.fixture(scope="session")
def import_isolated():
    """``import_isolated(root, "pkg.module")``: import from ``root``, leaving sys.modules as is."""
    return _import_isolated


@pytest.fixture(scope="session")
def fast_rubric(tmp_path_factory) -> Path:
    """The rubric with a 1 s CPU budget per request (6 s per test): hangs end quickly."""
    data = yaml.safe_load(DEFAULT_RUBRIC.read_text())
    for item in data["items"]:
        item["timeout"] = 1.0
    path = tmp_path_factory.mktemp("rubric") / "rubric.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="session", autouse=True)
def kept_grades(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The run's grades, kept for its other tests (``tests.helpers.memo``) in a folder its
    pytest-xdist workers share: their temporary folders' parent."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if hasattr(request.config, "workerinput") else base
    memo.folder = shared / "kept-grades"
    yield
    memo.folder = None


def pytest_configure() -> None:
    """Some tests stop a child with Ctrl-C (SIGINT). A shell starts a background job with
    SIGINT ignored, its children inherit that, and Python then never raises KeyboardInterrupt:
    undo it, so those tests do not depend on how the run was started."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """A check's ``NotGradable`` and a session's ``Aborted`` are skips inside a grading run;
    escaping one of the project's own tests they would skip that test silently, so there they
    fail the test."""
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance((NotGradable, Aborted)):
        report.outcome = "failed"
        name = call.excinfo.type.__name__
        report.longrepr = f"a check raised {name} ({call.excinfo.value}) in a project test"
    return report


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter):
    """One line at the end of the run, after pytest's short summary and just before its
    counts: how many tests did not run for want of which program or package, so a green run
    never hides that the sandbox, the pictures, the browser or PyTorch went unchecked."""
    yield
    wanting: Counter[tuple[str, str]] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        found = isinstance(report.longrepr, tuple) and programs.REASON.search(
            report.longrepr[2]
        )  # a skip's longrepr: (file, line, reason)
        if found:
            wanting[(found[1], found[2])] += 1
    if wanting:
        terminalreporter.write_line(
            "skipped for want of an optional dependency: "
            + ", ".join(
                f"{n} {'test needs' if n == 1 else 'tests need'} {needed} ({install})"
                for (needed, install), n in sorted(wanting.items())
            )
        )


@pytest.fixture(autouse=True)
def _draws_from_this_course():
    """Every test draws from this course's profile unless it says otherwise, whatever a test
    before it in the same worker measured or graded in its process."""
    with course.using(None):
        yield
