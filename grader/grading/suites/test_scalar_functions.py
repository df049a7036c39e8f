"""Grading tests for a scalar engine whose ops are classes with a context (MiniTorch's Module 1:
``Fn.apply``, ``Fn.backward(ctx, d)``, ``topological_sort`` and ``backpropagate``). Each test
checks one rubric item and nothing else: the parts of the engine an item does not name are the
grader's own (its variables, its functions, a correct order). Items are named in this course's
words (``micrograd.*``); a course's profile renames them (``minitorch.*``)."""

from hypothesis import given
from hypothesis import strategies as st

from grader.checks import differences, graphs, ops, variables
from grader.grading.course import on_course
from grader.grading.plugin import graded, graded_property
from grader.grading.strata import stratified
from grader.language.coverage import (
    SCALAR_UPSTREAM,
    scalar_beside_kink_strata,
    scalar_special_strata,
)
from grader.language.dags import dags, diamonds, second_walks
from grader.language.differences import CURVES, arity
from grader.language.graphs import SCALAR_FUNCTION_GRAPH_OPS
from grader.language.profiles import KINKS, TOPO
from grader.language.strategies import UPSTREAM, op_cases, scalar_graphs, scalar_kink_cases

DIAMONDS = 12
"""Levels of shared variables in the walk-cost test: 2**12 reads of the lowest variable's
parents for a walk that revisits them."""
FUNCTION_OPS = ("add", "mul", "neg", "inv", "log", "exp", "sigmoid", "relu", "lt", "eq")
"""The ops whose function classes are graded one at a time (their item is named as the op)."""


# One function alone: Fn.apply on fresh scalars, then Fn.backward(ctx, d_output).
for _op in FUNCTION_OPS:
    globals()[f"test_{_op}"] = graded_property(
        f"micrograd.ops.{_op}",
        f"test_{_op}_forward_and_backward",
        op_cases("scalar", _op),
        lambda grading, case: ops.check_op(grading, *case),
        needs=(_op,),
        # an operand at 0 and below it, and each side of relu's kink, whatever the seed draws
        strata=stratified(
            lambda had, domain, op=_op: [
                (graph, SCALAR_UPSTREAM)
                for graph in (*scalar_beside_kink_strata(op), *scalar_special_strata(op))
            ],
            kind="scalar",
        ),
    )


# relu exactly at 0, which the draws above keep away from: the derivative the course's own
# words give, where its profile quotes them.
@graded("micrograd.ops.relu", needs=("relu", KINKS))
@given(scalar_kink_cases("relu"))
def test_relu_passes_no_derivative_at_zero(grading, case):
    ops.check_kink(grading, *case)


@graded("micrograd.topo", needs=(TOPO,))
@given(dags(), st.booleans())
def test_topological_sort_is_a_valid_order(grading, dag, constants):
    variables.check_topological_sort(grading, dag, constants, counts_reads=False)


@graded("micrograd.topo", needs=(TOPO,))
def test_topological_sort_visits_each_shared_variable_once(grading):
    variables.check_topological_sort(grading, diamonds(DIAMONDS), constants=False)


@graded("micrograd.topo", needs=(TOPO,))
@given(second_walks())
def test_topological_sort_again_from_a_variable_made_from_a_sorted_one(grading, case):
    variables.check_second_sort(grading, *case)


@graded("micrograd.topo", needs=(TOPO,))
@given(dags(max_nodes=3))
def test_topological_sort_of_a_constant_is_empty(grading, dag):
    variables.check_constant_root(grading, dag)


@graded("micrograd.backward")
@given(dags(shared=False), st.sampled_from(UPSTREAM))
def test_backpropagate_hands_each_variable_its_derivative(grading, dag, seed):
    variables.check_backpropagate(grading, dag, seed)


@graded("micrograd.backward")
@given(dags(shared=False), st.sampled_from(UPSTREAM))
def test_chain_rule_pairs_each_input_with_its_derivative(grading, dag, seed):
    variables.check_backpropagate(grading, dag, seed, scalars=True)


# Shared variables, seeded with 1.0 and on the grader's own chain rule: only the ledger that
# adds every contribution is graded here.
@graded("micrograd.accumulate")
@given(dags())
def test_contributions_from_every_path_add_up(grading, dag):
    variables.check_backpropagate(grading, dag, 1.0)


@graded("micrograd.central_difference")
@given(
    st.sampled_from(sorted(CURVES)).flatmap(
        lambda curve: st.tuples(
            st.just(curve),
            st.lists(
                st.integers(-12, 12).map(lambda k: k / 4),
                min_size=arity(curve),
                max_size=arity(curve),
            ),
            st.integers(0, arity(curve) - 1),
        )
    ),
    st.sampled_from((1e-2, 2e-2, 5e-3)),
)
def test_central_difference_is_symmetric(grading, case, epsilon):
    differences.check_central_difference(grading, *case, epsilon)


@graded("micrograd.graphs")
@given(on_course("scalar", SCALAR_FUNCTION_GRAPH_OPS, lambda had, _: scalar_graphs(had, 3, 8)))
def test_random_graphs_match_the_oracles(grading, graph):
    graphs.check_graph(grading, graph)
