"""The oracles agree, in every configuration the grader runs in, on everything a grading suite
draws: no grade rests on one oracle being right by luck.

- The suites' own grading tests run here, with the rubric's numbers of examples, on the
  reference engine in this process: each graph and op case a check asks the oracles about
  (repaired operands included) must be answered right by every configuration's first
  oracle, and confirmed by its second.
- Finite differences alone (the student release without torch) are right on every op the
  rubric grades, each scalar parameter apart. This part needs no torch.
- Where torch is installed, all three agree on thousands of random whole graphs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from grader.checks.session import GradingSession
from grader.grading import rubric as rubric_module
from grader.language.graphs import (
    BABYGRAD_GRAPH_OPS,
    BABYGRAD_OP_ITEMS,
    BABYGRAD_OPERATOR_FORMS,
    MICROGRAD_OPS,
    MICROGRAD_PRIMITIVES,
    MICROGRAD_SUGAR,
    OPS,
    Graph,
    Node,
)
from grader.language.strategies import (
    op_cases,
    scalar_graphs,
    single_op_graphs,
    tensor_graphs,
)
from grader.language.verdicts import Tolerance
from grader.layout import DEFAULT_RUBRIC, SUITES
from grader.oracles import Evaluation, numeric, reference, torch_oracle
from grader.oracles.chain import Oracles
from grader.oracles.reference import ReferenceOracle
from grader.worker import probes, replies
from grader.worker.engines import load_engine
from grader.worker.replies import Answer
from tests.helpers.grading import REFERENCE, runs_in_this_course
from tests.helpers.programs import needs_torch

RUBRIC = rubric_module.load(DEFAULT_RUBRIC)
REF = ReferenceOracle(REFERENCE)
TORCH = torch_oracle.available()
EXACT = Tolerance(atol=1e-9, rtol=1e-9)
"""Two float64 engines computing the same expression."""


def configurations() -> dict[str, Oracles]:
    """Every oracle configuration this machine can grade in."""
    found = {
        "reference": Oracles(REFERENCE, use_torch=False),
        "finite differences": Oracles(None, use_torch=False),
    }
    if TORCH:
        found |= {"reference+torch": Oracles(REFERENCE), "torch": Oracles(None)}
    return found


CONFIGURATIONS = configurations()


def assert_close(got: Evaluation, want: Evaluation, tol: Tolerance, what: str) -> None:
    for kind, pairs in (
        ("value", zip(got.values, want.values, strict=True)),
        ("grad", zip(got.grads, want.grads, strict=True)),
    ):
        for index, (a, b) in enumerate(pairs):
            assert tol.close(np.asarray(a), np.asarray(b)), (
                f"{what}: {kind} {index} is {a}, the reference says {b}"
            )


def right_in_every_configuration(graph: Graph, out_grad: np.ndarray | None) -> Evaluation:
    """Each configuration's first oracle gives the reference's answer (finite differences
    within their own error), and every one of its confirmers confirms it: a correct engine is
    never failed, and a wrong one never escapes because the oracles disagreed. The answer."""
    truth = REF.evaluate_graph(graph, out_grad)
    for name, oracles in CONFIGURATIONS.items():
        first = oracles.expected(graph, out_grad)
        bound = numeric.TOLERANCE if oracles.primary is oracles.numeric else EXACT
        assert_close(first, truth, bound, f"{name}: {oracles.primary.name}")
        for confirmer in oracles.confirmers:
            assert oracles.agrees(confirmer, graph, out_grad, first), (
                f"{name}: {confirmer.name} does not confirm {oracles.primary.name}"
            )
    return truth


class EveryConfiguration:
    """Where a session's oracles stand: each graph and op case a check asks about is put to
    every configuration (``right_in_every_configuration``), then checked against the answer."""

    def __init__(self) -> None:
        self.cases = 0

    def expected(self, graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
        self.cases += 1
        return right_in_every_configuration(graph, out_grad)

    def tolerance(self, rubric: Tolerance, graph: Graph) -> Tolerance:
        return rubric  # this course defines no op otherwise than the oracles

    def confirmed(self, graph: Graph, out_grad: np.ndarray | None, first: Evaluation) -> bool:
        raise AssertionError("the reference engine, graded, disagrees with the oracles")


class InProcess(GradingSession):
    """A grading session whose student is the reference engine, answering in this process
    (no worker, no sandbox), and whose oracles are ``EveryConfiguration``: the suites' own
    tests run on it unchanged, every check included."""

    def __init__(self) -> None:
        super().__init__(submission=REFERENCE, tolerances=RUBRIC.tolerances)
        self.oracles = EveryConfiguration()
        self.engines = {a: load_engine(REFERENCE, a) for a in ("micrograd", "babygrad")}

    def ask(self, assignment: str, probe: str, case: dict[str, Any], *_: Any) -> Answer | None:
        answer = probes.PROBES[probe](self.engines[assignment], case)
        return replies.decode(probe, case, json.loads(json.dumps(answer)))  # as sent


def suite_tests(assignment: str, run_seed: int) -> list[tuple[str, Any]]:
    """The hypothesis tests of a fresh copy of a grading suite that this course's profile
    runs, each with its rubric item, the share of its item's examples a grading run gives it
    and a seed of its own from ``run_seed``."""
    path = SUITES / f"test_{assignment}.py"
    spec = importlib.util.spec_from_file_location(f"_suite_{assignment}_{run_seed}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tests = []
    for name, test in vars(module).items():
        if not (name.startswith("test_") and getattr(test, "is_hypothesis_test", False)):
            continue
        if not runs_in_this_course(test):
            continue
        (rubric,) = [mark for mark in test.pytestmark if mark.name == "rubric"]
        share = rubric.kwargs.get("share", 1)
        examples = max(3, -(-RUBRIC.by_id[rubric.args[0]].examples // share))
        settings(
            max_examples=examples,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )(test)
        tests.append((rubric.args[0], seed(run_seed + zlib.crc32(name.encode()))(test)))
    return tests


SUITE_RUNS = [
    (assignment, run_seed)
    for assignment in ("micrograd", "babygrad")
    for run_seed in (RUBRIC.seed, RUBRIC.seed + 7919)
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("assignment", "run_seed"), SUITE_RUNS, ids=[f"{a}-{s}" for a, s in SUITE_RUNS]
)
def test_every_suite_strategy_in_every_configuration(assignment, run_seed):
    tests = suite_tests(assignment, run_seed)
    assert len(tests) >= 5
    session = InProcess()
    for item, test in tests:
        session.current_item = item  # as the plugin sets it for each graded test
        test(session)
    assert session.oracles.cases > 100


ANY = "any"
"""Any parameter: a babygrad op's parameters depend on its operand's shape."""


def graded_ops() -> list[tuple[str, str, str, Any]]:
    """Every op the rubric grades, as its item draws it: ``op_cases`` where an op is graded
    alone (its own backward), ``single_op_graphs`` where as a one-op graph (micrograd's sugar,
    babygrad's operator forms); each micrograd parameter apart (babygrad's depend on the
    shape)."""
    found = [
        (draw, "scalar", op, param)
        for draw, ops in (("op", MICROGRAD_PRIMITIVES), ("graph", MICROGRAD_SUGAR))
        for op in ops
        for param in OPS[op].params(())
    ]
    found += [("op", "tensor", op, ANY) for op in BABYGRAD_OP_ITEMS.values()]
    return found + [("graph", "tensor", op, ANY) for op in BABYGRAD_OPERATOR_FORMS]


GRADED_OPS = graded_ops()


@pytest.mark.parametrize(
    ("draw", "kind", "op", "param"),
    GRADED_OPS,
    ids=[f"{d}-{k}-{o}-{p}" for d, k, o, p in GRADED_OPS],
)
@settings(max_examples=25, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@seed(3)
@given(data=st.data())
def test_finite_differences_alone_are_right_on_every_graded_op(draw, kind, op, param, data):
    if draw == "op":
        cases = op_cases(kind, op)
    else:
        cases = single_op_graphs(kind, (op,)).map(lambda graph: (graph, None))
    if param != ANY:
        cases = cases.filter(lambda case: case[0].nodes[0].param == param)
    graph, out_grad = data.draw(cases)
    out_grad = None if out_grad is None else np.asarray(out_grad)
    single = CONFIGURATIONS["finite differences"]
    assert single.names == ["finite differences"]
    assert_close(
        single.expected(graph, out_grad),
        REF.evaluate_graph(graph, out_grad),
        numeric.TOLERANCE,
        f"finite differences on {op}({param})",
    )


def test_finite_differences_alone_grade_a_correct_engine_with_their_own_bound():
    """Without reference and torch the rubric's tolerance widens to finite differences' own
    error, so a correct engine keeps full marks."""
    oracles = CONFIGURATIONS["finite differences"]
    tight = Tolerance(atol=1e-9, rtol=1e-9)
    engine = load_engine(REFERENCE, "micrograd")

    @settings(max_examples=200, database=None, deadline=None)
    @seed(4)
    @given(scalar_graphs(MICROGRAD_OPS, max_nodes=8))
    def agrees(graph):
        answer = probes.probe_graph(engine, {"graph": graph.to_json()})
        expected = oracles.expected(graph)
        grads = answer["grads"]
        assert len(grads) == graph.size  # every node's, the leaves' first
        for got, want in zip(grads[: len(graph.leaves)], expected.grads, strict=True):
            assert oracles.tolerance(tight, graph) == numeric.TOLERANCE
            assert oracles.tolerance(tight, graph).close(
                np.asarray(got["data"]).reshape(want.shape), want
            )

    agrees()


def test_the_options_choose_the_oracles(monkeypatch):
    """The reference unless dropped, torch unless turned off or absent; finite differences
    always, as the first (cheapest) confirmer."""
    assert Oracles(REFERENCE, use_torch=False).names == ["reference", "finite differences"]
    assert Oracles(None, use_torch=False).names == ["finite differences"]
    monkeypatch.setattr(torch_oracle, "available", lambda: True)
    assert Oracles(REFERENCE).names == ["reference", "finite differences", "pytorch"]
    assert Oracles(None).names == ["pytorch", "finite differences"]
    monkeypatch.setattr(torch_oracle, "available", lambda: False)
    assert Oracles(REFERENCE).names == ["reference", "finite differences"]
    assert Oracles(None).names == ["finite differences"]


MANY = settings(
    max_examples=1000, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)


@needs_torch
@MANY
@seed(1)
@given(scalar_graphs(MICROGRAD_OPS, max_nodes=8))
def test_scalar_graphs(graph):
    right_in_every_configuration(graph, None)


@needs_torch
@MANY
@seed(2)
@given(tensor_graphs(BABYGRAD_GRAPH_OPS, max_nodes=6))
def test_tensor_graphs(graph):
    right_in_every_configuration(graph, None)


@needs_torch
def test_pytorch_once_loaded_is_out_of_the_collectors_sight():
    """A fresh grading process that loads PyTorch (``torch_oracle.load``) leaves its objects
    frozen: a full collection scans what the grade makes, not PyTorch's hundreds of thousands."""
    probe = (
        "import gc; from grader.oracles import torch_oracle; torch_oracle.load(); "
        "print(gc.get_freeze_count(), len(gc.get_objects()))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True
    )
    frozen, scanned = map(int, done.stdout.split())
    assert frozen > 10 * scanned, done.stdout


def test_finite_differences_confirm_first_and_torch_only_where_they_cannot(monkeypatch):
    """A verdict is confirmed by the cheapest oracle that agrees: torch (a second and a half to
    import) is asked only when finite differences disagree, and a verdict no oracle confirms
    is withdrawn."""
    graph = Graph("scalar", (np.array(0.5),), (Node("tanh", (0,)),))
    right = numeric.evaluate_graph(graph)
    off = Evaluation(right.values, tuple(g + 1 for g in right.grads))
    asked: list[str] = []

    def answering(name: str, evaluation: Evaluation):
        return lambda graph, out_grad=None, ops=None: asked.append(name) or evaluation

    monkeypatch.setattr(torch_oracle, "available", lambda: True)
    oracles = Oracles(REFERENCE)
    monkeypatch.setattr(torch_oracle, "evaluate_graph", answering("pytorch", right))
    assert oracles.confirmed(graph, None, right) and asked == []  # numeric agreed
    monkeypatch.setattr(numeric, "evaluate_graph", answering("finite differences", off))
    assert oracles.confirmed(graph, None, right)
    assert asked == ["finite differences", "pytorch"]
    monkeypatch.setattr(torch_oracle, "evaluate_graph", answering("pytorch", off))
    assert not oracles.confirmed(graph, None, right) and oracles.disagreements == 1


GRAPH = Graph("scalar", (1.5, -2.0), (Node("mul", (0, 1)), Node("tanh", (2,))))


@pytest.fixture
def asked(monkeypatch) -> list[tuple]:
    """The reference's evaluations from here on, in a process that knows no answer yet."""
    monkeypatch.setattr(reference, "KNOWN", {})
    monkeypatch.setattr(reference, "FOUND", {})
    monkeypatch.setattr(reference, "DECODED", {})
    calls: list[tuple] = []
    probe = probes.probe_graph
    monkeypatch.setattr(probes, "probe_graph", lambda *a: calls.append(a) or probe(*a))
    return calls


def test_the_reference_answers_an_example_once_and_knows_it_after(tmp_path, asked):
    """A lane's runs take the answers earlier runs worked out (``reference.KNOWN``): the same
    request of the same reference is evaluated once, a changed reference is asked again."""
    first = ReferenceOracle(REFERENCE).evaluate_graph(GRAPH)
    again = ReferenceOracle(REFERENCE).evaluate_graph(GRAPH)
    assert len(asked) == 1 and len(reference.FOUND) == len(reference.KNOWN) == 1
    assert all(
        np.array_equal(a, b)
        for a, b in zip(first.values + first.grads, again.values + again.grads, strict=True)
    )
    changed = shutil.copytree(REFERENCE, tmp_path / "reference")
    (changed / "micrograd" / "engine.py").write_text(
        (changed / "micrograd" / "engine.py").read_text() + "\n# changed\n"
    )
    ReferenceOracle(changed).evaluate_graph(GRAPH)
    assert len(asked) == 2 and len(reference.KNOWN) == 2


def test_a_lane_decodes_the_answers_it_learns_once_for_its_forks(monkeypatch, asked):
    """A lane decodes the answers its runs send back (``learn(..., decode=True)``), read-only,
    and its next runs take those arrays instead of decoding the answer again; answers learnt
    otherwise (a fork's, from a folder) stay undecoded, and a decoded answer the process does
    not know (``KNOWN``) is never taken."""
    first = ReferenceOracle(REFERENCE).evaluate_graph(GRAPH)
    found = dict(reference.FOUND)
    reference.learn(found)
    assert reference.DECODED == {}
    monkeypatch.setattr(reference, "KNOWN", {})  # the lane, after its first run
    reference.learn(found, decode=True)
    ((values, grads),) = reference.DECODED.values()
    assert not any(a.flags.writeable for a in values + grads)
    again = ReferenceOracle(REFERENCE).evaluate_graph(GRAPH)
    assert len(asked) == 1
    taken = zip(again.values + again.grads, values + grads[: len(GRAPH.leaves)], strict=True)
    assert all(a is b for a, b in taken)  # the lane's arrays themselves
    assert all(
        np.array_equal(a, b)
        for a, b in zip(first.values + first.grads, again.values + again.grads, strict=True)
    )
    monkeypatch.setattr(reference, "KNOWN", {})
    ReferenceOracle(REFERENCE).evaluate_graph(GRAPH)
    assert len(asked) == 2


def test_a_folder_keeps_the_answers_for_the_next_grading_runs(tmp_path, monkeypatch, asked):
    """A grade that replays from a folder keeps the reference's answers its run worked out
    there (``reference.keep_answers``), and the next grading run, a process of its own, takes
    them instead of evaluating the same examples again; another grader source reads none, and
    a folder keeps the newest ``ANSWER_FILES``."""
    first = ReferenceOracle(REFERENCE).evaluate_graph(GRAPH)
    reference.keep_answers(tmp_path)
    (kept,) = tmp_path.glob("answers.*.json")
    (tmp_path / f"{kept.name.rsplit('.', 2)[0]}.broken.json").write_text("{not json")
    monkeypatch.setattr(reference, "KNOWN", {})  # the next grading run
    monkeypatch.setattr(reference, "FOUND", {})
    reference.load_answers(tmp_path)
    again = ReferenceOracle(REFERENCE).evaluate_graph(GRAPH)
    assert len(asked) == 1 and reference.FOUND == {}
    assert all(
        np.array_equal(a, b)
        for a, b in zip(first.values + first.grads, again.values + again.grads, strict=True)
    )
    reference.keep_answers(tmp_path)  # nothing new: no file
    assert len(list(tmp_path.glob("answers.*.json"))) == 2
    monkeypatch.setattr(reference, "KNOWN", {})
    monkeypatch.setattr(reference, "grader_digest", lambda: "another grader source")
    reference.load_answers(tmp_path)
    assert reference.KNOWN == {}
    for n in range(reference.ANSWER_FILES + 3):
        before = set(tmp_path.iterdir())
        monkeypatch.setattr(reference, "FOUND", {f"key {n}": {"ok": n}})
        reference.keep_answers(tmp_path)
        (written,) = set(tmp_path.iterdir()) - before
        os.utime(written, (1_000_000 + n, 1_000_000 + n))  # one a second: newest is clear
    files = list(tmp_path.glob(f"{reference._answer_files()}*.json"))
    assert len(files) == reference.ANSWER_FILES
    reference.load_answers(tmp_path)
    assert f"key {reference.ANSWER_FILES + 2}" in reference.KNOWN and "key 0" not in reference.KNOWN
