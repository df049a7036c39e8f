"""Grading tests for micrograd. Each test checks one rubric item and nothing else."""

from hypothesis import given
from hypothesis import strategies as st

from grader.given import WEIGHTS, dags, shallow
from grader.graphs import MICROGRAD_OPS, MICROGRAD_SUGAR
from grader.plugin import graded
from grader.strategies import op_cases, scalar_graphs, single_op_graphs


@graded("micrograd.topo")
@given(dags())
def test_build_topo_is_a_valid_order(grading, dag):
    grading.check_topo(dag)


@graded("micrograd.backward")
@given(dags())
def test_backward_walks_in_reverse_topological_order(grading, dag):
    grading.check_backward(dag)


@graded("micrograd.backward")
@given(st.integers(1, 3), st.sampled_from(WEIGHTS))
def test_second_backward_adds_without_reset(grading, leaves, weight):
    grading.check_backward(shallow(leaves, (weight, 1.0, -2.0)), passes=2)


@graded("micrograd.accumulate")
@given(scalar_graphs(("add", "mul"), max_leaves=2, max_nodes=4))
def test_shared_nodes_accumulate(grading, graph):
    grading.check_graph(graph)


@graded("micrograd.zero_grad")
@given(dags())
def test_zero_grad_resets_every_node(grading, dag):
    grading.check_zero_grad(dag)


def _op_test(item: str, op: str):
    """One op alone: its forward value and its own ``_backward``, nothing else."""

    def test(grading, case):
        grading.check_op(*case)

    test.__name__ = test.__qualname__ = f"test_{op}_forward_and_backward"
    return graded(item)(given(op_cases("scalar", op))(test))


test_add = _op_test("micrograd.ops.add", "add")
test_mul = _op_test("micrograd.ops.mul", "mul")
test_pow = _op_test("micrograd.ops.pow", "powk")
test_tanh = _op_test("micrograd.ops.tanh", "tanh")
test_exp = _op_test("micrograd.ops.exp", "exp")
test_relu = _op_test("micrograd.ops.relu", "relu")


@graded("micrograd.sugar")
@given(single_op_graphs("scalar", MICROGRAD_SUGAR))
def test_operator_sugar_with_numbers_on_either_side(grading, graph):
    grading.check_graph(graph)


@graded("micrograd.graphs")
@given(scalar_graphs(MICROGRAD_OPS, max_leaves=3, max_nodes=8))
def test_random_graphs_match_the_oracles(grading, graph):
    grading.check_graph(graph)


@graded("micrograd.deep")
def test_a_100000_node_chain(grading):
    grading.check_deep(100_000)
