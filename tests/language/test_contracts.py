"""A course's contract as data (``domain:``, ``definitions:``, ``editions:`` in its profile):
validated with the line of each mistake, and what the strategies draw for a course stays inside
the domain its contract states."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from grader.language import profiles
from grader.language.dags import Dag, _gathered, dags, second_walks
from grader.language.definitions import Definitions
from grader.language.domains import axes_form, batches_prepend
from grader.language.graphs import TENSOR_GRAPH_OPS, Graph, Node, evaluate
from grader.language.profiles import ProfileError
from grader.language.strategies import op_cases, single_op_graphs, tensor_graphs
from grader.language.verdicts import Tolerance
from grader.layout import COURSES

NEEDLE = profiles.load(COURSES / "needle-hw1" / "profile.yaml").of("needle")
DRAWS = settings(
    max_examples=150,
    database=None,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)

PROFILE = """profile: mine
title: mine
assignments:
  needle:
    kind: tensor
    walk: {topo: nested, zero_grad: absent}
    ops: [add, sum, matmul, pow]
    api: {package: needle, files: [__init__.py]}
"""


@pytest.mark.parametrize(
    ("contract", "message"),
    [
        ("    domain: {axes: [tuple]}\n", r"profile.yaml:9: assignments/needle/domain/axes"),
        ("    domain: {matmul_batch: left}\n", r"profile.yaml:9: .*matmul_batch: 'left'"),
        ("    domain: {max_operands: 1}\n", r"profile.yaml:9: .*max_operands: 1 is less"),
        ("    definitions: {log: {eps: 0.5}}\n", r"profile.yaml:9: .*definitions/log/eps"),
        ("    definitions:\n      log: {eps: 1.0e-6}\n", r"profile.yaml:10: .*log is not in"),
        (
            "    editions:\n      '2022': {marker: ops.py, lacks: [relu]}\n",
            r"profile.yaml:10: assignments/needle/editions/2022/lacks: relu is not in",
        ),
        ("    editions:\n      '2022': {marker: ops}\n", r"profile.yaml:10: .*marker"),
    ],
)
def test_a_contract_error_names_its_file_and_line(tmp_path, contract, message):
    path = tmp_path / "profile.yaml"
    path.write_text(PROFILE + contract)
    with pytest.raises(ProfileError, match=message):
        profiles.load(path)


def test_an_edition_is_told_apart_by_its_layout(tmp_path):
    """2022's ops.py, 2023's ops/ops_mathematic.py; an upload with neither is graded on every
    op of the list."""
    package = tmp_path / "python" / "needle"
    (package / "ops").mkdir(parents=True)
    assert NEEDLE.edition_in(tmp_path) is None
    (package / "ops" / "ops_mathematic.py").touch()
    assert NEEDLE.in_edition(NEEDLE.edition_in(tmp_path)).ops == NEEDLE.ops
    (package / "ops.py").touch()
    edition = NEEDLE.edition_in(tmp_path)
    assert edition is not None and edition.name == "2022"
    assert set(NEEDLE.ops) - set(NEEDLE.in_edition(edition).ops) == {"pow"}
    needle = profiles.load(COURSES / "needle-hw1" / "profile.yaml")
    assert needle.as_uploaded(tmp_path).editions == " needle=2022"  # its recordings' own
    assert profiles.course().as_uploaded(tmp_path).editions == ""


@seed(5)
@DRAWS
@given(op_cases("tensor", "sum", NEEDLE.domain))
def test_needles_summation_is_drawn_with_tuple_or_no_axes(case):
    graph, _ = case
    assert axes_form(graph.nodes[0].param) in ("none", "tuple")


@seed(5)
@DRAWS
@given(op_cases("tensor", "matmul", NEEDLE.domain))
def test_needles_matmul_batches_only_over_missing_axes(case):
    graph, _ = case
    a, b = (leaf.shape for leaf in graph.leaves)
    assert batches_prepend(a[:-2], b[:-2])


@seed(5)
@DRAWS
@given(tensor_graphs(TENSOR_GRAPH_OPS, 3, 6, NEEDLE.domain))
def test_needles_graphs_stay_in_its_domain(graph):
    values = evaluate(graph)
    for node in graph.nodes:
        if node.op == "sum":
            assert axes_form(node.param) in ("none", "tuple")
        if node.op == "matmul":
            a, b = (values[i].shape for i in node.args)
            assert batches_prepend(a[:-2], b[:-2])


@seed(5)
@DRAWS
@given(single_op_graphs("tensor", ("sum", "matmul"), NEEDLE.domain))
def test_a_routed_op_is_drawn_inside_the_courses_domain(graph):
    """The routing tests (``t.sum(...)``, ``a @ b``) draw in the course's domain too."""
    op = graph.nodes[0]
    if op.op == "sum":
        assert axes_form(op.param) in ("none", "tuple")
    else:
        a, b = (graph.leaves[i].shape for i in op.args)
        assert batches_prepend(a[:-2], b[:-2])


@seed(5)
@DRAWS
@given(dags(max_nodes=6, max_operands=2), dags(shared=False, max_operands=2))
def test_needles_walk_graphs_have_ops_of_two_inputs_at_most(shared, tree):
    for dag in (shared, tree):
        assert all(len(pairs) <= 2 for pairs in dag.nodes)
        assert dag.reachable() == set(range(dag.size))


def test_a_chain_of_two_input_nodes_gathers_what_one_node_would():
    """The gathered root of a two-input course gives every node the gradient one node of many
    inputs gives it."""
    drawn = (((0, 2.0), (1, -1.0)),)
    sinks = [3, 0, 1, 2]
    wide = Dag(3, (*drawn, *_gathered(sinks, len(sinks))))
    chained = Dag(3, (*drawn, *_gathered(sinks, 2)))
    assert len(wide.nodes) == 2 and len(chained.nodes) == 4
    assert all(len(pairs) <= 2 for pairs in chained.nodes)
    assert wide.backward()[0][:4] == chained.backward()[0][:4] == [3.0, 0.0, 1.0, 1.0]


def test_minitorchs_log_is_taken_at_x_plus_eps_and_either_reading_passes():
    """The oracles' log is the course's; the exact log is within what the definition admits,
    an off-by-a-factor derivative is not."""
    definitions = Definitions(log_eps=1e-6)
    x = np.asarray([0.125, 1.0, 3.0])
    graph = Graph("scalar", (x,), (Node("log", (0,), None),))
    (course,) = evaluate(graph, ops=definitions.table)[1:]
    assert np.array_equal(course, np.log(x + 1e-6))
    rubric = Tolerance(1e-6, 1e-6)
    bound = definitions.tolerance(rubric, graph)
    assert bound.close(np.log(x), course) and not rubric.close(np.log(x), course)
    assert not bound.close(1.0 / x, 1.0 / (2 * x))
    assert definitions.tolerance(rubric, Graph("scalar", (x,), (Node("exp", (0,), None),))) == (
        rubric
    )
    assert np.array_equal(evaluate(graph)[1], np.log(x))  # the op table itself stays exact


def test_a_second_walk_gives_what_the_courses_own_code_gives():
    """``y = 2 x0 + 2 x1``, walked; then ``z = y + x2`` (``walk.second_backward``): needle and
    this course's babygrad overwrite each ``.grad``; the babygrad book does not say (its
    author's code adds, a reader's may overwrite: either is right)."""
    dag = Dag(3, (((0, 2.0), (1, 2.0)), ((3, 1.0), (2, 1.0))))
    first, overwritten = dag.walks([3, 4], "overwrite")
    assert first == [2.0, 2.0, None, 1.0, None]
    assert overwritten == [2.0, 2.0, 1.0, 1.0, 1.0]
    assert dag.walks([3, 4], "accumulate")[1] == [4.0, 4.0, 1.0, 2.0, 1.0]
    book = profiles.load(COURSES / "babygrad-book" / "profile.yaml").of("babygrad")
    needle = profiles.load(COURSES / "needle-hw1" / "profile.yaml").of("needle")
    assert (book.walk.second_backward, needle.walk.second_backward) == ("unspecified", "overwrite")


@seed(5)
@settings(max_examples=60, database=None, phases=[Phase.generate], deadline=None)
@given(second_walks(max_operands=2))
def test_a_second_walk_starts_below_the_root_of_a_tree(case):
    dag, first = case
    assert dag.leaves <= first < dag.size - 1 and first in dag.reachable()
    uses = [i for pairs in dag.nodes for i, _ in pairs]
    assert len(uses) == len(set(uses)) and max(len(pairs) for pairs in dag.nodes) <= 2
