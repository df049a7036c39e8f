"""Grading tests for babygrad. Each test checks one rubric item and nothing else: the parts of
the engine an item does not name are the grader's own (its ops, its walk and ledger)."""

from hypothesis import given

from grader.checks import accumulation, broadcasting, graphs, ops, walks
from grader.grading.plugin import graded, graded_property
from grader.language.dags import dags
from grader.language.graphs import BABYGRAD_GRAPH_OPS, BABYGRAD_OP_ITEMS, BABYGRAD_OPERATOR_FORMS
from grader.language.strategies import (
    broadcasting_cases,
    op_cases,
    single_op_graphs,
    tensor_backward_cases,
    tensor_graphs,
    tensor_shapes,
)

DIAMONDS = 30
"""Levels of shared tensors in the walk-cost test: 2**30 visits for a walk that revisits them."""


# One op alone: Function.__call__, then the op's own backward(out_grad, node).
for _item, _op in BABYGRAD_OP_ITEMS.items():
    globals()[f"test_{_item}"] = graded_property(
        f"babygrad.ops.{_item}", f"test_{_item}_forward_and_backward", op_cases("tensor", _op),
        lambda grading, case: ops.check_op(grading, *case))

# One operator or method at a time (numbers on either side) reaches the right op.
for _op in BABYGRAD_OPERATOR_FORMS:
    globals()[f"test_routing_{_op}"] = graded_property(
        "babygrad.tensor_ops", f"test_{_op}_routes_to_the_right_op",
        single_op_graphs("tensor", (_op,)),
        lambda grading, graph: graphs.check_graph(grading, graph, probe="routing"),
        share=len(BABYGRAD_OPERATOR_FORMS))


@graded("babygrad.broadcasting")
@given(broadcasting_cases(("add", "mul", "sub", "div")))
def test_implicit_broadcasting_sums_gradients_back(grading, case):
    broadcasting.check_broadcast(grading, *case)


@graded("babygrad.backward")
@given(tensor_backward_cases(dags(shared=False), tensor_shapes()))
def test_backward_walks_the_graph_with_a_ledger(grading, case):
    walks.check_tensor_backward(grading, *case)


@graded("babygrad.backward")
@given(dags(max_nodes=6))
def test_backward_visits_each_tensor_after_its_consumers(grading, dag):
    walks.check_walk_order(grading, dag)


@graded("babygrad.backward")
def test_backward_visits_each_shared_tensor_once(grading):
    walks.check_walk_cost(grading, "babygrad", DIAMONDS)


@graded("babygrad.accumulate")
@given(dags(max_nodes=5), tensor_shapes(max_dims=2))
def test_shared_tensors_accumulate(grading, dag, shape):
    accumulation.check_ledger(grading, dag, shape)


@graded("babygrad.graphs")
@given(tensor_graphs(BABYGRAD_GRAPH_OPS, max_leaves=3, max_nodes=6))
def test_random_graphs_match_the_oracles(grading, graph):
    graphs.check_graph(grading, graph)
