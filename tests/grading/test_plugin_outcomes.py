"""The plugin's mapping from a grading test's outcome to its item's result
(``grader/grading/plugin.py``), in-process and without a worker: made-up verdicts for
``_grade_failure``, and a tiny grading suite run by ``pytester`` in this process, whose tests
pass, raise verdicts, abort as the session does, or break, and whose results file is read back.
"""

from __future__ import annotations

import json

import pytest

from grader.grading.options import GradeOptions, pytest_arguments
from grader.grading.plugin import _grade_failure
from grader.grading.reproduce import PRINTS_ALIKE_NOTE
from grader.language.verdicts import WrongAnswer
from tests.helpers.planted import REFERENCE

pytest_plugins = ["pytester"]

VERDICT = WrongAnswer(
    "failed",
    "wrong gradient",
    ["a.grad: expected 1, got 2"],
    "print(1)",
    ["tanh-derivative: 1 - t"],
)


# ----------------------------------------------------------------------- _grade_failure


def test_a_verdict_is_its_own_failure():
    assert _grade_failure(VERDICT) is VERDICT


def test_a_verdict_is_found_inside_nested_exception_groups():
    group = ExceptionGroup(
        "outer", [ValueError("x"), ExceptionGroup("inner", [KeyError("k"), VERDICT])]
    )
    assert _grade_failure(group) is VERDICT


@pytest.mark.parametrize(
    "exc",
    [
        None,
        AssertionError("grader bug"),
        KeyError("k"),
        ExceptionGroup("no verdict", [ValueError("v")]),
    ],
    ids=["none", "assertion", "key-error", "group"],
)
def test_anything_else_is_no_verdict(exc):
    assert _grade_failure(exc) is None


# ---------------------------------------------------------------- a tiny grading suite

RUBRIC = """
assignments:
  micrograd: {title: m, atol: 1.0e-6, rtol: 1.0e-6}
items:
  - {id: micrograd.topo, title: topo, points: 10, hint: visit operands first}
  - {id: micrograd.backward, title: backward, points: 12, hint: reversed}
  - {id: micrograd.zero_grad, title: zero, points: 6, hint: every node}
  - {id: micrograd.deep, title: deep, points: 5, hint: h, extra_credit: true}
  - {id: micrograd.graphs, title: graphs, points: 16, hint: h,
     depends_on: [micrograd.topo, micrograd.backward]}
"""

SUITE = """
import pytest
from hypothesis import strategies as st

from grader.language.verdicts import WrongAnswer
from grader.grading.plugin import graded, graded_property
from grader.checks.session import AbortRecord, NotGradable


def verdict():
    return WrongAnswer("failed", "wrong gradient", ["a.grad: expected 1, got 2"], "print(1)",
                       ["tanh-derivative: 1 - t"])


@graded("micrograd.topo")
def test_topo_passes(grading):
    pass


@graded("micrograd.topo", weight=3)
def test_topo_fails(grading):
    raise verdict()


@graded("micrograd.topo")
def test_topo_not_gradable(grading):
    raise NotGradable(("micrograd.ops.tanh", "micrograd.ops.add"))


def wait_for_tanh(grading, x):
    if x >= 3:
        raise NotGradable(("micrograd.ops.tanh",))


test_topo_property_not_gradable = graded_property(
    "micrograd.topo", "test_topo_property_not_gradable", st.integers(0, 100), wait_for_tanh)


@graded("micrograd.backward")
def test_backward_times_out(grading):
    grading._abort("timeout", "timed out after 1 s of CPU time")


@graded("micrograd.backward")
def test_backward_stops_while_shrinking(grading):
    grading._abort("failed", "wrong gradient", verdict())


@graded("micrograd.zero_grad")
def test_zero_grad_is_missing(grading):
    grading._abort("missing", "not implemented: zero_grad")


@graded("micrograd.zero_grad")
def test_zero_grad_grader_bug(grading):
    assert 1 == 2, "the grader's own mistake"


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture broke")


@graded("micrograd.deep")
def test_deep_setup_error(grading, broken_fixture):
    pass


def check(grading, x):
    if x >= 7:
        raise WrongAnswer("failed", f"too big: {x}")


test_graphs_property = graded_property("micrograd.graphs", "test_graphs_property",
                                       st.integers(0, 100), check)
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """Run ``SUITE`` in this process as the CLI runs a grading suite (autoload off, the plugin
    loaded explicitly, no worker ever started); the results file's items and outcomes."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    rubric = pytester.makefile(".yaml", rubric=RUBRIC)
    pytester.makepyfile(test_suite=SUITE)
    results = pytester.path / "results.json"

    options = GradeOptions(
        submission=REFERENCE, rubric=rubric, assignment="micrograd", sandbox="none", torch=False
    )

    def grade(*extra: str) -> tuple[pytest.RunResult, dict, dict]:
        outcome = pytester.runpytest_inprocess(
            "-p",
            "grader.grading.plugin",
            *pytest_arguments(options),
            "--grader-results",
            str(results),
            "-p",
            "no:cacheprovider",
            *extra,
        )
        payload = json.loads(results.read_text())
        return (
            outcome,
            {i["id"]: i for i in payload["items"]},
            {
                o["name"]: o | {"internal_errors": payload["internal_errors"]}
                for o in payload["outcomes"]
            },
        )

    return grade


def test_outcomes_of_every_kind(run):
    result, items, outcomes = run()
    assert set(outcomes) == {
        "test_topo_passes",
        "test_topo_fails",
        "test_backward_times_out",
        "test_backward_stops_while_shrinking",
        "test_zero_grad_is_missing",
        "test_zero_grad_grader_bug",
        "test_deep_setup_error",
        "test_graphs_property",
        "test_topo_not_gradable",
        "test_topo_property_not_gradable",
    }
    # pytest's own view: an abort is a failure, never a skip; not gradable is a skip
    result.assert_outcomes(passed=1, failed=6, errors=1, skipped=2)

    assert outcomes["test_topo_passes"]["passed"]
    assert outcomes["test_topo_passes"]["status"] == "passed"
    fails = outcomes["test_topo_fails"]
    assert (fails["passed"], fails["status"], fails["reason"], fails["weight"]) == (
        False,
        "failed",
        "wrong gradient",
        3.0,
    )
    # its example, run as a student would, prints what the reference prints, and says so
    assert fails["details"] == ["a.grad: expected 1, got 2", PRINTS_ALIKE_NOTE]
    assert (fails["snippet"], fails["bugs"]) == ("print(1)", ["tanh-derivative: 1 - t"])

    timeout = outcomes["test_backward_times_out"]
    assert (timeout["passed"], timeout["status"], timeout["reason"]) == (
        False,
        "timeout",
        "timed out after 1 s of CPU time",
    )
    shrinking = outcomes["test_backward_stops_while_shrinking"]
    assert (shrinking["status"], shrinking["details"]) == (
        "failed",
        ["a.grad: expected 1, got 2", PRINTS_ALIKE_NOTE],
    )
    missing = outcomes["test_zero_grad_is_missing"]
    assert (missing["status"], missing["reason"]) == ("missing", "not implemented: zero_grad")

    for name in ("test_zero_grad_grader_bug", "test_deep_setup_error"):
        broken = outcomes[name]
        assert (broken["passed"], broken["status"], broken["reason"]) == (
            False,
            "error",
            "internal grader error (not your fault)",
        )
    internal = outcomes["test_topo_passes"]["internal_errors"]
    assert len(internal) == 2
    assert any(
        "test_zero_grad_grader_bug" in e and "the grader's own mistake" in e for e in internal
    )
    assert any("test_deep_setup_error" in e and "fixture broke" in e for e in internal)

    prop = outcomes["test_graphs_property"]
    assert (prop["status"], prop["reason"]) == ("failed", "too big: 7")  # shrunk to the edge

    waiting = outcomes["test_topo_not_gradable"]
    assert (waiting["passed"], waiting["status"], waiting["reason"]) == (
        False,
        "not_gradable",
        "not gradable until micrograd.ops.tanh and micrograd.ops.add pass",
    )
    waiting = outcomes["test_topo_property_not_gradable"]  # at once, never shrunk
    assert (waiting["status"], waiting["reason"]) == (
        "not_gradable",
        "not gradable until micrograd.ops.tanh passes",
    )


def test_item_results_from_the_outcomes(run):
    _, items, _ = run()
    assert set(items) == {
        "micrograd.topo",
        "micrograd.backward",
        "micrograd.zero_grad",
        "micrograd.deep",
        "micrograd.graphs",
    }
    topo = items["micrograd.topo"]  # the tests that are not gradable do not count
    assert (topo["status"], topo["score"], topo["max_score"]) == ("partial", 2.5, 10)
    assert [t["test"] for t in topo["not_gradable"]] == [
        "test_topo_not_gradable",
        "test_topo_property_not_gradable",
    ]
    assert topo["bugs"] == ["tanh-derivative"]
    assert topo["reason"] == "wrong gradient"
    backward = items["micrograd.backward"]
    assert (backward["status"], backward["score"]) == ("timeout", 0.0)
    zero = items["micrograd.zero_grad"]
    assert (zero["status"], zero["score"]) == ("missing", 0.0)
    assert items["micrograd.deep"]["status"] == "error"
    assert items["micrograd.deep"]["extra_credit"]
    graphs = items["micrograd.graphs"]
    assert (graphs["status"], graphs["score"]) == ("failed", 0.0)
    assert graphs["fix_first"] == ["micrograd.topo", "micrograd.backward"]
    assert "Fix micrograd.topo, micrograd.backward first" in graphs["feedback"]


def test_only_the_selected_items_are_run_and_scored(run):
    result, items, outcomes = run("--grader-only", "micrograd.topo")
    assert set(items) == {"micrograd.topo"}
    assert set(outcomes) == {
        "test_topo_passes",
        "test_topo_fails",
        "test_topo_not_gradable",
        "test_topo_property_not_gradable",
    }
    result.assert_outcomes(passed=1, failed=1, skipped=2, deselected=6)


def test_a_test_not_gradable_is_never_recorded_for_replay(run, tmp_path):
    """As an abort: it ends at once, and a replay of it would end nowhere Hypothesis ends."""
    folder = tmp_path / "recordings"
    folder.mkdir()
    run("--grader-replay", str(folder))
    recorded = {
        json.loads(p.read_text())["test"].rsplit("::", 1)[-1] for p in folder.glob("*.json")
    }
    assert recorded == {"test_graphs_property"}
