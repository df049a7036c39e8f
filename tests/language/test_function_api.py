"""A scalar course whose ops are classes, as data (``grader.language.function_api``): the
oracles agree on its ops, the worker's probes on MiniTorch's reference and on a second engine
written differently answer as the checks expect, every snippet a student sees runs in their
own API, and a profile that spells a scalar API with a tensor API's words is told where.

These are the probes' own proofs, without a grading run; ``tests/flows/test_courses.py`` grades the
same engines and planted bugs against MiniTorch's rubric from end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from grader.checks import differences, variables
from grader.checks.ops import op_snippet
from grader.grading.suites.test_scalar_functions import FUNCTION_OPS
from grader.language import profiles
from grader.language.dags import Dag
from grader.language.differences import CURVES, arity, central
from grader.language.graphs import Graph, Node
from grader.language.profiles import ProfileError
from grader.language.snippets import graph_snippet
from grader.language.strategies import op_cases
from grader.language.verdicts import Tolerance, WrongAnswer
from grader.layout import COURSES
from grader.oracles import numeric, torch_oracle
from grader.oracles.reference import ReferenceOracle
from grader.worker import encoding, probes, protocol, replies
from grader.worker.answers import decode_array
from grader.worker.engines import load_engine, reinstate
from grader.worker.protocol import Probe
from tests import helpers
from tests.helpers.programs import needs_torch

PROFILE = profiles.load(COURSES / "minitorch-module1" / "profile.yaml")
ASSIGNMENT = PROFILE.assignment("scalar")
API = ASSIGNMENT.functions
ENGINES = {
    "reference": COURSES / "minitorch-module1" / "reference",
    "other": helpers.ENGINES / "minitorch-module1" / "other",
}
DAG = Dag(2, (((0, 2.0), (1, -1.0)), ((2, 0.5), (0, 3.0))))
"""n2 = 2 n0 - n1, n3 = 0.5 n2 + 3 n0: n0 reached along two paths."""


def engine(root: Path):
    loaded = load_engine(root, ASSIGNMENT.name, API.package, API.folder, whole=True)
    loaded.api = API  # as the worker's import request gives it
    return loaded


def run(source: str, root: Path) -> str:
    """``source`` in a fresh interpreter beside the engine, as a student runs a snippet."""
    done = subprocess.run(
        [sys.executable, "-c", source],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@needs_torch
@pytest.mark.parametrize("op", FUNCTION_OPS)
def test_the_three_oracles_agree_on_every_function(op):
    """On the course's definitions (its log is taken at x + EPS, as the reference's)."""
    reference = ReferenceOracle(ENGINES["reference"], PROFILE)
    table = PROFILE.definitions("scalar").table

    @settings(max_examples=25, database=None, deadline=None)
    @given(op_cases("scalar", op))
    def agree(case):
        graph, out_grad = case
        first = reference.evaluate_graph(graph, out_grad)
        for other in (torch_oracle.evaluate_graph, numeric.evaluate_graph):
            second = other(graph, out_grad, table)
            for a, b in zip(
                [*first.values, *first.grads], [*second.values, *second.grads], strict=True
            ):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)

    agree()


@pytest.mark.parametrize("name", ENGINES)
def test_the_walk_probes_see_the_walk(name):
    loaded = engine(ENGINES[name])
    reinstate(loaded)
    order = probes.PROBES["variable_topo"](loaded, {"dag": DAG.to_json(), "constants": [2]})
    assert DAG.topo_problems(order["order"][::-1], root_first=True) == []
    for scalars in (False, True):
        case = {"dag": DAG.to_json(), "order": [3, 2, 1, 0], "seed": -1.5, "scalars": scalars}
        answer = probes.PROBES["backpropagate"](loaded, {**case, "constants": [2]})
        received = [[float(decode_array(d, "d")) for d in ds] for ds in answer["received"]]
        accumulated = [sum(float(decode_array(x, "x")) for x in xs) for xs in answer["accumulated"]]
        assert received == [[], [], [-0.75], [-1.5]]
        assert accumulated[:2] == [-6.0, 0.75]


@pytest.mark.parametrize("name", ENGINES)
def test_central_difference_is_the_grader_s_own(name):
    loaded = engine(ENGINES[name])
    case = {"curve": "bowl", "values": [1.0, -0.5, 2.0], "arg": 2, "epsilon": 0.01}
    answer = probes.PROBES["central_difference"](loaded, case)
    got = float(decode_array(answer["value"], "value"))
    assert got == pytest.approx(central("bowl", [1.0, -0.5, 2.0], 2, 0.01), abs=1e-10)


def central_difference_verdict(
    value: float, arg: int = 2, asked: dict | None = None
) -> WrongAnswer | None:
    """The check's verdict on a ``central_difference`` that answers ``value`` for the bowl in
    argument ``arg``; what it asked goes in ``asked``."""

    class Session:
        def assignment(self, kind):
            return ASSIGNMENT

        def ask(self, assignment, probe, case, snippet, on_timeout=None):
            if asked is not None:
                asked.update(assignment=assignment, probe=probe, case=case, snippet=snippet)
            answer = {"value": encoding.encode(np.float64(value), "value")}
            return replies.decode(probe, case, json.loads(json.dumps(answer)))

    try:
        differences.check_central_difference.__wrapped__(
            Session(), "bowl", [1.0, -0.5, 2.0], arg, 0.01
        )
    except WrongAnswer as verdict:
        return verdict
    return None


def test_a_central_difference_is_judged_against_the_graders_own():
    right = central("bowl", [1.0, -0.5, 2.0], 2, 0.01)
    assert central_difference_verdict(right + 1e-12) is None
    verdict = central_difference_verdict(right + 1e-4)  # what a one-sided difference is off by
    assert verdict is not None
    assert (verdict.status, verdict.reason) == ("failed", "wrong central difference")
    assert "central_difference(f, 1.0, -0.5, 2.0, arg=2, epsilon=0.01)" in verdict.snippet


def test_a_central_difference_of_half_steps_either_side_passes():
    """Steps of epsilon / 2 either side, over epsilon (the article the docstring links)."""
    assert central_difference_verdict(central("bowl", [1.0, -0.5, 2.0], 2, 0.005)) is None


def test_a_wrong_central_difference_says_what_the_courses_guide_expects():
    """Steps of epsilon either side, over 2 epsilon (MiniTorch's guide), not the half steps."""
    full, half = (central("bowl", [1.0, -0.5, 2.0], 2, e) for e in (0.01, 0.005))
    verdict = central_difference_verdict(full + 1e-4)
    assert verdict is not None
    expected = [f"expected {x:.6g}, got {full + 1e-4:.6g}" for x in (full, half)]
    assert expected[0] != expected[1]
    assert verdict.details == [f"central_difference: {expected[0]}"]


@pytest.mark.parametrize(
    ("arg", "default", "keywords"), [(0, True, "epsilon=0.01"), (1, False, "arg=1, epsilon=0.01")]
)
def test_the_first_argument_is_left_to_the_courses_default(arg, default, keywords):
    asked: dict = {}
    central_difference_verdict(central("bowl", [1.0, -0.5, 2.0], arg, 0.01), arg, asked)
    assert (asked["case"]["arg"], asked["case"]["default_arg"]) == (arg, default)
    assert f"central_difference(f, 1.0, -0.5, 2.0, {keywords}))" in asked["snippet"]
    assert (asked["assignment"], asked["probe"]) == (ASSIGNMENT.name, "central_difference")


def test_a_central_difference_answer_without_a_value_is_invalid():
    """The session shows it with the example, as every answer that does not decode."""
    with pytest.raises(protocol.InvalidAnswer, match="^the answer has no valid 'value'$"):
        replies.decode(Probe.CENTRAL_DIFFERENCE, {}, {})


@pytest.mark.parametrize("name", ENGINES)
def test_every_snippet_runs_in_the_students_own_api(name):
    root = ENGINES[name]

    @settings(max_examples=5, database=None, deadline=None)
    @given(op_cases("scalar", "mul"))
    def op(case):
        assert run(op_snippet(*case, ASSIGNMENT), root)

    op()
    graph = Graph(
        "scalar",
        (np.asarray(0.5), np.asarray(2.25)),
        (
            Node("sigmoid", (0,), None),
            Node("log", (1,), None),
            Node("rdiv", (2,), 2.0),
            Node("mul", (3, 4), None),
        ),
    )
    printed = [float(x) for x in run(graph_snippet(graph, ASSIGNMENT), root).split()]
    expected = ReferenceOracle(ENGINES["reference"], PROFILE).evaluate_graph(graph).grads
    exact = Tolerance(1e-12, 1e-12)  # but for log, which either engine may take at x + EPS
    bound = PROFILE.definitions("scalar").tolerance(exact, graph)
    assert bound.close(np.asarray(printed), np.asarray([float(g) for g in expected]))
    order = [int(i) for i in run(_walk_snippet("topo"), root).strip("[]").split(",")]
    assert DAG.topo_problems(order[::-1], root_first=True) == []
    assert run(_walk_snippet("backpropagate"), root) == "[-6.0, 0.75]"


def _walk_snippet(which: str) -> str:
    """The snippets of ``grader.checks.variables``, as a failure would show them."""
    shown = {}

    class Session:
        profile = PROFILE

        def assignment(self, kind):
            return ASSIGNMENT

        def ask(self, assignment, probe, case, snippet, on_timeout=None):
            shown["snippet"] = snippet
            raise LookupError

    with pytest.raises(LookupError):
        if which == "topo":
            variables.check_topological_sort.__wrapped__(Session(), DAG, True)
        else:
            variables.check_backpropagate.__wrapped__(Session(), DAG, -1.5)
    return shown["snippet"]


def test_a_scalar_api_spelled_in_a_tensor_apis_words_is_told_where(tmp_path):
    text = (COURSES / "minitorch-module1" / "profile.yaml").read_text()
    profile = tmp_path / "profile.yaml"
    profile.write_text(text.replace("      derivative: derivative\n", "      node_op: history\n"))
    line = text.splitlines().index("      derivative: derivative") + 1
    with pytest.raises(ProfileError, match=rf"profile.yaml:{line}: .*api: node_op is not part"):
        profiles.load(profile)


def test_the_curves_bend_everywhere_so_a_one_sided_difference_shows():
    for name, curve in CURVES.items():
        for arg in range(arity(name)):
            values = [0.0] * arity(name)
            one_sided = (
                curve(*[v + (0.01 if i == arg else 0) for i, v in enumerate(values)])
                - curve(*values)
            ) / 0.01
            assert abs(one_sided - central(name, values, arg, 0.01)) > 100 * 1e-8, name
