"""Grading tests for micrograd. Each test checks one rubric item and nothing else: the parts of
the engine an item does not name are the grader's own (its nodes, its primitive ops, its walk)."""

from hypothesis import given
from hypothesis import strategies as st

from grader.checks import accumulation, graphs, ops, walks
from grader.grading.course import on_course
from grader.grading.plugin import graded, graded_property
from grader.grading.strata import stratified
from grader.language.coverage import (
    SCALAR_UPSTREAM,
    accumulate_strata,
    scalar_beside_kink_strata,
    scalar_kink_strata,
    scalar_number_strata,
    scalar_special_strata,
)
from grader.language.dags import IN_USE_BACKWARDS, TRAINED_ZERO_GRADS, WEIGHTS, dags, shallow
from grader.language.graphs import (
    MICROGRAD_COMPOSED,
    MICROGRAD_OPS,
    MICROGRAD_PRIMITIVES,
    MICROGRAD_SUGAR,
)
from grader.language.profiles import KINKS, NESTED, SECOND_ADDS, TOPO, ZERO_GRAD
from grader.language.strategies import (
    accumulate_cases,
    number_operand_cases,
    op_cases,
    scalar_graphs,
    scalar_kink_cases,
    scalar_number_graphs,
)
from grader.worker.protocol import Probe

DIAMONDS = 30
"""Levels of shared nodes in the walk-cost tests (build_topo, zero_grad): 2**30 visits for a
walk that revisits them."""


@graded("micrograd.topo", needs=(TOPO,))
@given(dags())
def test_build_topo_is_a_valid_order(grading, dag):
    walks.check_topo(grading, dag)


@graded("micrograd.topo", needs=(TOPO,))
def test_build_topo_visits_each_shared_node_once(grading):
    walks.check_walk_cost(grading, "scalar", DIAMONDS)


@graded("micrograd.backward")
@given(dags())
def test_backward_walks_in_reverse_topological_order(grading, dag):
    walks.check_backward(grading, dag)


@graded("micrograd.backward", needs=(NESTED,))
def test_backward_visits_each_shared_node_once(grading):
    walks.check_walk_cost(grading, "scalar", DIAMONDS)


@graded("micrograd.backward", needs=(SECOND_ADDS,))
@given(st.integers(1, 3), st.sampled_from(WEIGHTS))
def test_second_backward_adds_without_reset(grading, leaves, weight):
    walks.check_backward(grading, shallow(leaves, (weight, 1.0, -2.0)), passes=2)


@graded("micrograd.backward", needs=(SECOND_ADDS,))
def test_backward_on_a_graph_in_use(grading):
    """As a training loop calls it: again from an inner node, and from a root whose grad is
    not 0 (the root set to 1, what the others held added to, where the course's words say
    so). Fixed graphs: every seed grades them."""
    for dag, roots, held in IN_USE_BACKWARDS:
        walks.check_backward(grading, dag, roots=roots, held=held)


# Every _backward adds into gradients that already hold something: one test per primitive,
# one for the sugar built from them.
for _name, _ops in [*((op, (op,)) for op in MICROGRAD_PRIMITIVES), ("sugar", MICROGRAD_SUGAR)]:
    globals()[f"test_{_name}_accumulates"] = graded_property(
        "micrograd.accumulate",
        f"test_{_name}_adds_into_gradients",
        st.sampled_from(_ops).flatmap(accumulate_cases),
        lambda grading, case: accumulation.check_accumulate(grading, *case),
        share=len(MICROGRAD_PRIMITIVES) + 1,
        needs=_ops,
        strata=stratified(lambda had, domain: accumulate_strata(had), kind="scalar", needs=_ops),
    )


@graded("micrograd.zero_grad", needs=(ZERO_GRAD,))
@given(dags())
def test_zero_grad_resets_every_node(grading, dag):
    walks.check_zero_grad(grading, dag)


@graded("micrograd.zero_grad", needs=(ZERO_GRAD,))
def test_zero_grad_from_a_new_root_over_a_trained_graph(grading):
    """Nodes whose grad is already 0 (a new root, a node a step gave nothing) still lead to
    nodes to reset. Fixed graphs: every seed grades them."""
    for dag, held in TRAINED_ZERO_GRADS:
        walks.check_zero_grad(grading, dag, held=held)


@graded("micrograd.zero_grad", needs=(ZERO_GRAD,))
def test_zero_grad_visits_each_shared_node_once(grading):
    walks.check_zero_grad_cost(grading, DIAMONDS)


# One op alone: its forward value and its own _backward, nothing else; + and * also with a
# plain number on the right (a + 2), which they must wrap themselves.
for _item, _op, _needs, _cases in [
    ("add", "add", ("add", "add_scalar"), number_operand_cases("add", "add_scalar")),
    ("mul", "mul", ("mul", "mul_scalar"), number_operand_cases("mul", "mul_scalar")),
    ("pow", "powk", ("powk",), op_cases("scalar", "powk")),
    ("tanh", "tanh", ("tanh",), op_cases("scalar", "tanh")),
    ("exp", "exp", ("exp",), op_cases("scalar", "exp")),
    ("relu", "relu", ("relu",), op_cases("scalar", "relu")),
]:
    globals()[f"test_{_item}"] = graded_property(
        f"micrograd.ops.{_item}",
        f"test_{_op}_forward_and_backward",
        _cases,
        lambda grading, case: ops.check_op(grading, *case),
        needs=_needs,
        # a + 2 with the number an int and a float, relu on each side of its kink, an operand
        # at 0 and below it, every exponent of a power, whatever the seed draws
        strata=stratified(
            lambda had, domain, number=_needs[-1], op=_op: [
                (graph, SCALAR_UPSTREAM)
                for graph in (
                    *scalar_number_strata(number),
                    *scalar_beside_kink_strata(op),
                    *scalar_special_strata(op),
                    *(scalar_special_strata(number) if number != op else ()),
                )
            ],
            kind="scalar",
        ),
    )


# relu exactly at 0, which the draws above keep away from (the oracles cannot judge there):
# the gradient the course's own words give, where its profile quotes them.
@graded("micrograd.ops.relu", needs=("relu", KINKS))
@stratified(lambda had, domain: scalar_kink_strata("relu"), kind="scalar", names="case")
@given(scalar_kink_cases("relu"))
def test_relu_passes_no_gradient_at_zero(grading, case):
    ops.check_kink(grading, *case)


# One composed operator at a time, on the grader's primitives and walk.
for _op in MICROGRAD_COMPOSED:
    globals()[f"test_sugar_{_op}"] = graded_property(
        "micrograd.sugar",
        f"test_{_op}_is_composed_right",
        scalar_number_graphs((_op,)),
        lambda grading, graph: graphs.check_graph(grading, graph, probe=Probe.SUGAR),
        share=len(MICROGRAD_COMPOSED),
        needs=(_op,),
        strata=stratified(lambda had, domain, op=_op: scalar_number_strata(op), kind="scalar"),
    )


@graded("micrograd.graphs")
@given(on_course("scalar", MICROGRAD_OPS, lambda had, _: scalar_graphs(had, 3, 8)))
def test_random_graphs_match_the_oracles(grading, graph):
    graphs.check_graph(grading, graph)


@graded("micrograd.deep", needs=(TOPO,))
def test_build_topo_through_a_100000_node_chain(grading):
    walks.check_deep(grading, 100_000)
