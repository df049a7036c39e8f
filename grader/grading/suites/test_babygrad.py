"""Grading tests for babygrad. Each test checks one rubric item and nothing else: the parts of
the engine an item does not name are the grader's own (its ops, its walk and ledger)."""

from collections.abc import Callable
from functools import partial
from typing import Any

from hypothesis import given
from hypothesis.strategies import SearchStrategy

from grader.checks import accumulation, broadcasting, graphs, ops, walks
from grader.grading.course import on_course
from grader.grading.plugin import graded, graded_property
from grader.grading.strata import stratified
from grader.language.coverage import backward_strata as tensor_backward_strata
from grader.language.coverage import (
    broadcast_strata,
    dag_strata,
    graph_strata,
    kink_strata,
    op_strata,
    routing_strata,
    special_strata,
    walk_strata,
)
from grader.language.dags import HANDED_BACK_LEDGERS, dags, second_walks
from grader.language.domains import Domain
from grader.language.graphs import (
    BABYGRAD_BROADCASTING,
    BABYGRAD_OPERATOR_FORMS,
    TENSOR_GRAPH_OPS,
    TENSOR_OP_ITEMS,
    TENSOR_OPERATOR_FORMS,
    respelled,
)
from grader.language.profiles import (
    ANY_OP,
    BROADCASTING,
    FROZEN_LEAVES,
    KINKS,
    LEDGER,
    MAX_SPELLINGS,
    OPERATOR,
    ROOTS,
    SPELLED,
)
from grader.language.strategies import (
    broadcasting_cases,
    kink_cases,
    op_cases,
    single_op_graphs,
    tensor_backward_cases,
    tensor_graphs,
    tensor_shapes,
)
from grader.worker.protocol import Probe

DIAMONDS = 30
"""Levels of shared tensors in the walk-cost test: 2**30 visits for a walk that revisits them."""


def in_domain(build: Callable[[Domain], SearchStrategy[Any]]) -> SearchStrategy[Any]:
    """``build(domain)``: drawn inside the input forms the graded course specifies."""
    return on_course("tensor", (), lambda _, domain: build(domain))


# One op alone: Function.__call__, then the op's own backward(out_grad, node), on the forms
# of input the course specifies.
for _item, _op in TENSOR_OP_ITEMS.items():
    globals()[f"test_{_item}"] = graded_property(
        f"babygrad.ops.{_item}",
        f"test_{_item}_forward_and_backward",
        in_domain(lambda domain, op=_op: op_cases("tensor", op, domain.forward())),
        lambda grading, case: ops.check_op(grading, *case),
        needs=(_op,),
        strata=stratified(
            lambda had, domain, op=_op: [*op_strata(op, domain), *special_strata(op, domain)]
        ),
    )

# relu and abs exactly at their kink, which the draws above keep away from (the oracles
# cannot judge there): the gradient the docstrings document, where the course documents one.
for _item in ("relu", "abs"):
    globals()[f"test_{_item}_at_zero"] = graded_property(
        f"babygrad.ops.{_item}",
        f"test_{_item}_passes_no_gradient_at_zero",
        kink_cases(_item),
        lambda grading, case: ops.check_kink(grading, *case),
        needs=(_item, KINKS),
        strata=stratified(lambda had, domain, op=_item: kink_strata(op)),
    )

# One operator or method at a time (numbers on either side) reaches the right op; an op the
# course's API applies by calling its class has no operator to route.
for _op in TENSOR_OPERATOR_FORMS:
    globals()[f"test_routing_{_op}"] = graded_property(
        "babygrad.tensor_ops",
        f"test_{_op}_routes_to_the_right_op",
        in_domain(partial(single_op_graphs, "tensor", (_op,))),
        lambda grading, graph: graphs.check_graph(grading, graph, probe=Probe.ROUTING),
        share=len(BABYGRAD_OPERATOR_FORMS),
        needs=(_op, OPERATOR + _op),
        strata=stratified(lambda had, domain, op=_op: routing_strata(op, domain)),
    )
    # each further spelling the course documents (``spellings:``, ``a.matmul(b)`` beside
    # ``a @ b``): the student writes each, so each is routed as the first is
    for _form in range(1, MAX_SPELLINGS + 1):
        globals()[f"test_routing_{_op}_spelling_{_form + 1}"] = graded_property(
            "babygrad.tensor_ops",
            f"test_{_op}_spelling_{_form + 1}_routes_to_the_right_op",
            in_domain(
                lambda domain, op=_op, form=_form: single_op_graphs("tensor", (op,), domain).map(
                    partial(respelled, op=op, form=form)
                )
            ),
            lambda grading, graph: graphs.check_graph(grading, graph, probe=Probe.ROUTING),
            share=len(BABYGRAD_OPERATOR_FORMS),
            needs=(_op, f"{SPELLED}{_form}.{_op}"),
            strata=stratified(
                lambda had, domain, op=_op, form=_form: [
                    respelled(graph, op, form) for graph in routing_strata(op, domain)
                ]
            ),
        )


# Implicit broadcasting, one test per elementwise op: an example on which the op itself is
# wrong is not gradable until the op's item passes, and stops only that op's test.
for _op in BABYGRAD_BROADCASTING:
    globals()[f"test_broadcasting_{_op}"] = graded_property(
        "babygrad.broadcasting",
        f"test_{_op}_sums_broadcast_gradients_back",
        broadcasting_cases((_op,)),
        lambda grading, case: broadcasting.check_broadcast(grading, *case),
        share=len(BABYGRAD_BROADCASTING),
        needs=(_op, BROADCASTING),
        # the item's explicit examples, the course's broadcasting ops taking turns
        strata=stratified(
            lambda had, domain, op=_op: broadcast_strata(had).get(op, []),
            needs=BABYGRAD_BROADCASTING,
        ),
    )


def backward_strata(edges: bool):
    """The explicit examples of a ``backward_cases`` test, as the course draws them."""
    return stratified(
        lambda had, domain: tensor_backward_strata(edges, bool(had), domain.max_operands),
        needs=(FROZEN_LEAVES,),
        names="case",
    )


def backward_cases(edges: bool):
    """Graphs for ``Tensor.backward``, with leaves that do not require grad where the course's
    API leaves those without a gradient (``walk.frozen_leaves``), of ops of no more inputs
    than the course's take."""
    return on_course(
        "tensor",
        (FROZEN_LEAVES,),
        lambda had, domain: tensor_backward_cases(
            dags(shared=False, max_operands=domain.max_operands),
            tensor_shapes(),
            edges=edges,
            frozen_leaves=bool(had),
        ),
    )


@graded("babygrad.backward")
@backward_strata(edges=False)
@given(backward_cases(edges=False))
def test_backward_walks_the_graph_with_a_ledger(grading, case):
    walks.check_tensor_backward(grading, *case)


# a lone leaf or a frozen graph: nothing on a tape to walk, where the walk starts where its tape
# ends (a course adapter's), so only a walk that may start at any node is asked it
@graded("babygrad.backward", needs=(ROOTS,))
@backward_strata(edges=True)
@given(backward_cases(edges=True))
def test_backward_with_nothing_to_propagate(grading, case):
    walks.check_tensor_backward(grading, *case)


@graded("babygrad.backward")
@stratified(lambda had, domain: walk_strata(), names="dag")
@given(in_domain(lambda domain: dags(max_nodes=6, max_operands=domain.max_operands)))
def test_backward_visits_each_tensor_after_its_consumers(grading, dag):
    walks.check_walk_order(grading, dag)


@graded("babygrad.backward", needs=(ROOTS,))
@given(
    in_domain(lambda domain: second_walks(max_operands=domain.max_operands)),
    tensor_shapes(max_dims=2),
)
def test_second_backward_walks_a_graph_built_on_a_walked_one(grading, case, shape):
    walks.check_second_walk(grading, *case, shape)


@graded("babygrad.backward")
def test_backward_visits_each_shared_tensor_once(grading):
    walks.check_walk_cost(grading, "tensor", DIAMONDS)


@graded("babygrad.accumulate", needs=(LEDGER,))
@stratified(lambda had, domain: [(dag, (2, 3)) for dag in dag_strata()], names="dag,shape")
@given(
    in_domain(lambda domain: dags(max_nodes=5, max_operands=domain.max_operands)),
    tensor_shapes(max_dims=2),
)
def test_shared_tensors_accumulate(grading, dag, shape):
    accumulation.check_ledger(grading, dag, shape)


@graded("babygrad.accumulate", needs=(LEDGER,))
def test_shared_tensors_accumulate_what_ops_hand_back(grading):
    """Ops that hand ``out_grad`` back unchanged, as Add does: a ledger that sums in place
    into what it was handed changes every tensor holding that array. Fixed graphs: every
    seed grades them."""
    for dag in HANDED_BACK_LEDGERS:
        accumulation.check_ledger(grading, dag, (2, 3), hands_back=True)


@graded("babygrad.graphs", needs=(ANY_OP,))
@stratified(graph_strata, needs=TENSOR_GRAPH_OPS, names="graph")
@given(on_course("tensor", TENSOR_GRAPH_OPS, lambda had, domain: tensor_graphs(had, 3, 6, domain)))
def test_random_graphs_match_the_oracles(grading, graph):
    graphs.check_graph(grading, graph)
