"""Grading tests for babygrad. Each test checks one rubric item and nothing else."""

from hypothesis import given

from grader.given import dags
from grader.graphs import BABYGRAD_GRAPH_OPS, BABYGRAD_OP_ITEMS, BABYGRAD_OPERATOR_FORMS
from grader.plugin import graded
from grader.strategies import (
    broadcasting_graphs,
    op_cases,
    single_op_graphs,
    tensor_graphs,
    tensor_shapes,
)


def _op_test(item: str, op: str):
    """One op alone: ``Function.__call__`` then the op's own ``backward(out_grad, node)``."""

    def test(grading, case):
        grading.check_op(*case)

    test.__name__ = test.__qualname__ = f"test_{item.rsplit('.', 1)[1]}_forward_and_backward"
    return graded(item)(given(op_cases("tensor", op))(test))


for _item, _op in BABYGRAD_OP_ITEMS.items():
    globals()[f"test_{_item}"] = _op_test(f"babygrad.ops.{_item}", _op)


@graded("babygrad.tensor_ops")
@given(single_op_graphs("tensor", BABYGRAD_OPERATOR_FORMS))
def test_operators_and_methods_route_to_the_right_ops(grading, graph):
    grading.check_graph(graph, grader_ops=True)


@graded("babygrad.broadcasting")
@given(broadcasting_graphs(("add", "mul", "sub", "div")))
def test_implicit_broadcasting_sums_gradients_back(grading, graph):
    grading.check_graph(graph)


@graded("babygrad.backward")
@given(dags(shared=False), tensor_shapes())
def test_backward_walks_the_graph_with_a_ledger(grading, dag, shape):
    grading.check_tensor_backward(dag, shape)


@graded("babygrad.accumulate")
@given(tensor_graphs(("add", "mul"), max_leaves=2, max_nodes=4))
def test_shared_tensors_accumulate(grading, graph):
    grading.check_graph(graph)


@graded("babygrad.graphs")
@given(tensor_graphs(BABYGRAD_GRAPH_OPS, max_leaves=3, max_nodes=6))
def test_random_graphs_match_the_oracles(grading, graph):
    grading.check_graph(graph)
