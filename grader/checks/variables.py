"""A scalar course's walk whose ops are classes (MiniTorch's): ``topological_sort`` alone, and
``backpropagate`` with a correct order swapped in, on grader-made graphs whose local
derivatives are known (``grader.language.dags``), so no op of the student's is involved."""

from __future__ import annotations

from collections.abc import Sequence
from textwrap import indent

import numpy as np

from grader.checks import untouched
from grader.checks.session import GradingSession, remembers_verdict
from grader.language.dags import Dag
from grader.language.figures import dag_figure
from grader.language.function_api import FunctionApi
from grader.language.profiles import TOPO
from grader.language.verdicts import Tolerance, WrongAnswer, mismatch
from grader.worker.protocol import Probe
from grader.worker.replies import Backpropagated

EXACT_ENOUGH = Tolerance(1e-9, 1e-9)
"""Weighted sums of a few floats: only the order of additions may differ from the grader's."""
ROOT_LAST = (
    "read backwards it is a valid order: yours puts the output last, where the course asks "
    "for it first (a backpropagate that reverses your order is right with it, and is graded "
    "so: the convention costs this item and the whole graphs, which rest on it, and nothing "
    "of backpropagate's)"
)
"""Said of an order that is right but for its direction, where the course's words give the
direction (``conventions: order: root_first``); elsewhere either direction is right."""
READS_PER_NODE = 4
"""How often a walk may read one variable's parents: a walk that goes into a shared variable
again from every path to it reads the lowest ones 2**depth times on a chain of diamonds."""


def variables_helper(api: FunctionApi) -> str:
    """The grader's variable: a scalar of the course's, made by the grader's function, whose
    Variable protocol is the grader's."""
    v, d = api.variable, api.derivative
    history = api.inputs.rpartition(".")[0]
    stepper, _, step = v["chain_rule"].rpartition(".")
    pair = api.paired("x", "w * d_output")
    rule = f"def {step}(self, d_output):\n    return [{pair} for x, w in self.pairs]"
    head, own_rule, stepped = "", "\n" + indent(rule, "    "), ""
    if stepper:  # MiniTorch's 2021: the chain rule is a step of each op node's history, and
        # the derivative a read-only property, shadowed here by a plain attribute
        head, own_rule = f"import copy\n\n\n{rule}\n\n\n", f"\n    {d} = None"
        stepped = f"""
        made.{stepper} = copy.copy(made.{stepper})
        made.{stepper}.pairs = pairs
        made.{stepper}.__class__ = type("Step", (type(made.{stepper}),), {{"{step}": {step}}})"""
    return f'''{head}class Variable({api.scalar}):
    """The grader's variable: {v["chain_rule"]} gives each input its weight times d_output."""
    @property
    def {v["parents"]}(self):
        if self.{v["is_constant"]}():
            raise ValueError("a constant was asked for its parents")
        return self.{api.inputs}
    def {v["is_leaf"]}(self):
        return not self.{v["is_constant"]}() and not self.pairs
    def {v["is_constant"]}(self):
        return self.{history} is None{own_rule}
    def {v["accumulate_derivative"]}(self, x):
        self.{d} = x if self.{d} is None else self.{d} + x


def variable(*pairs, value=1.0, constant=False):
    """A leaf of the given value, or the grader's function of these (input, weight) pairs."""
    if pairs:
        made = given(*(w for _, w in pairs)).{api.apply}(*(x for x, _ in pairs)){stepped}
    else:
        made = {api.leaf_source("value")}
    made.__class__, made.pairs = Variable, pairs
    if constant:
        made.{history} = None
    return made'''


def functions_helper(api: FunctionApi) -> str:
    """The grader's functions: subclasses of the course's function base class."""
    return f'''def given(*weights):
    """The grader's function: out = sum of weight * input; backward is exact."""
    class Given({api.package}.{api.function}):
        @staticmethod
        def {api.forward}(ctx, *values):
            return float(sum(w * v for w, v in zip(weights, values)))
        @staticmethod
        def {api.backward}(ctx, d_output):
            parts = tuple(w * d_output for w in weights)
            return parts[0] if len(parts) == 1 else parts
    return Given'''


def dag_lines(api: FunctionApi, dag: Dag, constants: Sequence[int], scalars: bool) -> list[str]:
    """The graph's nodes n0, n1, ...: the course's scalars made by the grader's functions,
    with the Variable protocol the course's (``scalars``) or the grader's."""
    lines = [f"import {api.package}", f"from {api.package} import {api.scalar}"]
    lines.append(functions_helper(api))
    if scalars:
        lines += [f"n{i} = {api.leaf_source(repr(1.0 + i))}" for i in range(dag.leaves)]
    else:
        lines.append(variables_helper(api))
        lines += [f"n{i} = variable(value={1.0 + i})" for i in range(dag.leaves)]
    for k, pairs in enumerate(dag.nodes):
        index = dag.leaves + k
        if scalars:
            weights = ", ".join(str(w) for _, w in pairs)
            operands = ", ".join(f"n{i}" for i, _ in pairs)
            lines.append(f"n{index} = given({weights}).{api.apply}({operands})")
            continue
        parts = [f"(n{i}, {w})" for i, w in pairs]
        if index in constants:
            parts.append("(variable(constant=True), 1.0)")
        lines.append(f"n{index} = variable({', '.join(parts)})")
    lines.append(f"nodes = [{', '.join(f'n{i}' for i in range(dag.size))}]")
    return lines


def _as_call(api: FunctionApi, dotted: str) -> str:
    return f"{api.package}.{dotted}"


def op_nodes_with_constants(dag: Dag) -> list[int]:
    """Every other op node gets a constant parent: the walk must skip it."""
    return [dag.leaves + k for k in range(0, len(dag.nodes), 2)]


@remembers_verdict
def check_topological_sort(
    session: GradingSession, dag: Dag, constants: bool, *, counts_reads: bool = True
) -> None:
    """``topological_sort`` from the root: every variable the root depends on once, constants
    left out, each variable before its parents (the root first where the course's words say
    so, ``conventions: order``; either way round where they do not); with ``counts_reads``,
    each variable's parents read a few times at most. The random graphs' test leaves the reads
    to the chain of diamonds' test, which finds a walk that revisits at every seed: counted on
    random graphs too, the same bug cost the item more at a seed whose graphs share deeper."""
    assignment = session.assignment("scalar")
    api = assignment.functions
    extra = op_nodes_with_constants(dag) if constants else []
    root = f"n{dag.size - 1}"
    snippet = "\n".join(
        [
            *dag_lines(api, dag, extra, scalars=False),
            f"order = {_as_call(api, api.topological_sort)}({root})",
            "print([next((i for i, m in enumerate(nodes) if m is v), -1) for v in order])",
        ]
    )
    answer = session.ask(
        assignment.name, Probe.VARIABLE_TOPO, {"dag": dag.to_json(), "constants": extra}, snippet
    )
    order, reads = list(answer.order), list(answer.reads)
    problems = _order_problems(session, dag, order)
    if problems:
        raise WrongAnswer(
            "failed",
            f"{api.topological_sort.rpartition('.')[2]} returned an invalid order",
            [f"order (as node numbers): {order}", *problems],
            snippet,
        )
    if counts_reads and (most := max(reads)) > READS_PER_NODE:
        raise WrongAnswer(
            "failed",
            "the walk visits shared variables again",
            [
                f"node {reads.index(most)}'s parents were read {most} times: keep the "
                f"{api.variable['unique_id']} of every variable visited and skip it after"
            ],
            snippet,
        )


def _order_problems(session: GradingSession, dag: Dag, order: list[int]) -> list[str]:
    """Why ``order`` (the root first) is not a valid order of ``dag``; none for one that is
    valid read backwards, unless the course's words ask for the root first (``ROOT_LAST``
    then says so, with them)."""
    problems = dag.topo_problems(order[::-1], root_first=True)
    if problems and not dag.topo_problems(order):
        convention = session.profile.of(session.assignment("scalar").name).convention("order")
        return [*problems, ROOT_LAST, convention.words] if convention.rule == "root_first" else []
    return problems


@remembers_verdict
def check_constant_root(session: GradingSession, dag: Dag) -> None:
    """``topological_sort`` of a constant: nothing to order, and no parents asked for."""
    assignment = session.assignment("scalar")
    api = assignment.functions
    extra = op_nodes_with_constants(dag)
    snippet = "\n".join(
        [
            *dag_lines(api, dag, extra, scalars=False),
            f"constant = n{extra[0]}.{api.inputs}[-1]",
            f"print(list({_as_call(api, api.topological_sort)}(constant)))",
        ]
    )
    case = {"dag": dag.to_json(), "constants": extra, "constant_root": True}
    answer = session.ask(assignment.name, Probe.VARIABLE_TOPO, case, snippet)
    order = list(answer.order)
    if order:
        raise WrongAnswer(
            "failed",
            "a constant's order is not empty",
            [f"order: {order}: a constant is not walked, so nothing depends on it"],
            snippet,
        )


@remembers_verdict
def check_backpropagate(
    session: GradingSession, dag: Dag, seed: float, scalars: bool = False
) -> None:
    """``backpropagate(root, seed)`` with a correct order swapped in for ``topological_sort``:
    every variable's ``chain_rule`` called once with all it receives, every leaf accumulating
    it. ``scalars``: on the course's scalars and the grader's functions, so its scalar's
    ``chain_rule`` is graded too. No variable has a constant input: the course's scalars never
    give one to a chain rule (``apply`` makes every number a leaf). Wrong with the grader's
    order (wrong numbers, or an exception: a ledger keyed from a root-last order reversed)
    but right end to end with the student's own ``topological_sort``, nothing is charged
    here: the order's convention is the ``topological_sort`` item's to grade
    (``check_topological_sort`` names it)."""
    assignment = session.assignment("scalar")
    api = assignment.functions
    # A walk that orders itself (MiniTorch 2020's breadth-first one) is given no order.
    given = session.profile.of(assignment.name).has(TOPO)
    order = sorted(dag.reachable(), reverse=True) if given else None
    expected = [seed * g for g in dag.backward()[0]]
    root = f"n{dag.size - 1}"
    module, _, name = api.topological_sort.rpartition(".")
    swapped = []
    if order is not None:
        swapped.append(
            f"{_as_call(api, module)}.{name} = lambda variable: "
            f"[{', '.join(f'n{i}' for i in order)}]  # a correct order, as the grader gives it"
        )
    snippet = "\n".join(
        [
            *dag_lines(api, dag, [], scalars),
            *swapped,
            api.walk_source(root, repr(seed)),
            f"print([n.{api.derivative} for n in nodes[:{dag.leaves}]])",
        ]
    )
    case = {"dag": dag.to_json(), "order": order, "seed": seed, "scalars": scalars}
    try:
        answer = session.ask(assignment.name, Probe.BACKPROPAGATE, case, snippet)
    except WrongAnswer:
        if given and _right_with_own_order(session, case, api, dag, expected):
            return
        raise
    untouched.fail_walk(
        answer.changed, dag.size, api.backpropagate.rpartition(".")[2], assignment, snippet
    )
    problems, got = _judged(api, dag, answer, expected, scalars, _once(session))
    if problems and not (given and _right_with_own_order(session, case, api, dag, expected)):
        raise WrongAnswer(
            "failed",
            "wrong derivatives from backpropagate",
            problems[:4],
            snippet,
            draw=lambda: dag_figure(dag, expected, got, EXACT_ENOUGH),
        )


def _right_with_own_order(
    session: GradingSession, case: dict, api: FunctionApi, dag: Dag, expected: list[float]
) -> bool:
    """Is the student's ``backpropagate`` right with their own ``topological_sort`` (their
    pair end to end)? Whatever goes wrong on this run is a no, and costs nothing more."""
    answer = session.try_ask(
        session.assignment("scalar").name, Probe.BACKPROPAGATE, {**case, "order": None}
    )
    if answer is None:
        return False
    return not _judged(api, dag, answer, expected, case["scalars"], _once(session))[0]


def _once(session: GradingSession) -> bool:
    """Does the course's text say each variable's chain rule runs once (``conventions:
    calls``)? Else a walk may run one again, and what each run was given is judged."""
    return session.profile.of(session.assignment("scalar").name).convention("calls").charged


def _judged(
    api: FunctionApi,
    dag: Dag,
    answer: Backpropagated,
    expected: list[float],
    scalars: bool,
    once: bool,
) -> tuple[list[str], list[np.ndarray | None]]:
    """What is wrong in a ``backpropagate`` probe's answer, and the derivatives it shows (each
    leaf's total, each op node's ``d_output``). ``once``: a chain rule run other than once is
    wrong in itself; else every run of it must be given the right ``d_output`` (a walk that
    asks it once per input), or the runs add up to it (a walk that hands a shared variable its
    share from each path in turn, as MiniTorch 2020's breadth-first queue may: the chain rule
    is linear in ``d_output``)."""
    received, accumulated = answer.received, answer.accumulated
    chain_rule = "the function's backward" if scalars else f"{api.variable['chain_rule']}"
    problems = []
    shown: list[np.ndarray | None] = []
    for i in range(dag.leaves, dag.size):
        calls, due = received[i], np.asarray(expected[i])
        what = f"n{i}: d_output given to {chain_rule}"
        shares = sum(calls, np.asarray(0.0))
        split = not once and len(calls) > 1 and not mismatch(what, shares, due, EXACT_ENOUGH)
        shown.append(
            shares if split else calls[0] if calls and (len(calls) == 1 or not once) else None
        )
        if not calls or (once and len(calls) != 1):
            problems.append(f"n{i}: {chain_rule} was called {len(calls)} times, not once")
        elif not split and (
            wrong := next(filter(None, (mismatch(what, c, due, EXACT_ENOUGH) for c in calls)), None)
        ):
            problems.append(wrong)
    got: list[np.ndarray | None] = []
    for i in range(dag.leaves):
        total = sum(accumulated[i], np.asarray(0.0)) if accumulated[i] else None
        got.append(total)
        if wrong := mismatch(
            f"n{i}.{api.derivative}", total, np.asarray(expected[i]), EXACT_ENOUGH
        ):
            problems.append(wrong)
    return problems, got + shown


@remembers_verdict
def check_second_sort(session: GradingSession, dag: Dag, first: int) -> None:
    """``topological_sort`` from op node ``first``, then from the root built on it: each a
    valid order of what its start depends on. An order is the same whatever was sorted
    before: a walk that keeps the ``unique_id`` of what it visited between calls leaves out,
    the second time, every variable the first call saw."""
    assignment = session.assignment("scalar")
    api = assignment.functions
    sort = _as_call(api, api.topological_sort)
    root = dag.size - 1
    show = "print([next((i for i, m in enumerate(nodes) if m is v), -1) for v in order])"
    snippet = "\n".join(
        [
            *dag_lines(api, dag, [], scalars=False),
            f"order = {sort}(n{first})  # an order from a variable of the graph",
            show,
            f"order = {sort}(n{root})  # then from a variable made from it",
            show,
        ]
    )
    case = {"dag": dag.to_json(), "constants": [], "first": first}
    answer = session.ask(assignment.name, Probe.VARIABLE_TOPO, case, snippet)
    name = api.topological_sort.rpartition(".")[2]
    for found, start, graph in ((answer.first, first, dag.upto(first)), (answer.order, root, dag)):
        order = list(found)
        problems = _order_problems(session, graph, order)
        if problems:
            if ROOT_LAST not in problems and start == root:
                problems.append(
                    f"{name} sorts anew on every call: the unique_ids visited by an earlier "
                    "call (kept in a module-level or default-argument container) leave out "
                    "what that call saw"
                )
            raise WrongAnswer(
                "failed",
                f"{name}(n{start}) returned an invalid order"
                + (f", after {name}(n{first})" if start == root else ""),
                [f"order (as node numbers): {order}", *problems],
                snippet,
            )
