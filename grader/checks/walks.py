"""The walks, on grader-made graphs whose local gradients are known: ``build_topo``,
``backward()``, ``zero_grad``, ``Tensor.backward``, and what they cost on shared nodes."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from grader.checks import bugs, untouched
from grader.checks.session import GradingSession, remembers_verdict
from grader.language import tape_snippets
from grader.language.assignments import MICROGRAD, Assignment
from grader.language.dags import Dag, diamonds
from grader.language.figures import dag_figure
from grader.language.profiles import TOPO
from grader.language.snippets import (
    DAG_HELPER,
    dag_snippet,
    tensor_dag_snippet,
    tensor_helper,
    tensor_imports,
)
from grader.language.tensor_api import TensorApi
from grader.language.verdicts import Tolerance, WrongAnswer, mismatch, show
from grader.worker.answers import Change
from grader.worker.protocol import Probe
from grader.worker.replies import Pass

EXPONENTIAL = "visits shared nodes again: exponential time"


def chain_snippet(length: int) -> str:
    """A chain of nodes as long as the graded one, then the student's ``build_topo``."""
    return "\n".join(
        [
            MICROGRAD.imports.replace("Value", "Value, build_topo"),
            "node = Value(1.0)",
            f"for _ in range({length}):",
            "    node = Value(0.0, (node,))",
            "print(len(build_topo(node)))",
        ]
    )


def diamond_snippet(assignment: Assignment, nested: bool = False) -> str:
    """A chain of diamonds whose depth the student can raise and watch the walk's time
    double, if it visits shared nodes again (``nested``: the order is built inside
    ``backward()``, which is what runs)."""
    if assignment.kind == "scalar":
        setup = [
            MICROGRAD.imports.replace("Value", "Value" if nested else "Value, build_topo"),
            DAG_HELPER,
            "node = Value(1.0)",
        ]
        level = [
            "    left = given(Value(0.0, (node,)), (node, 1.0))",
            "    right = given(Value(0.0, (node,)), (node, 1.0))",
            "    node = given(Value(0.0, (left, right)), (left, 0.5), (right, 0.5))",
        ]
        walk = "node.backward()" if nested else "build_topo(node)"
    else:
        api = assignment.api
        setup = [
            tensor_imports(api),
            tensor_helper(api),
            f"node = {api.leaf_source('np.ones(1)', True)}",
        ]
        level = [
            "    left, right = Given(1.0)(node), Given(1.0)(node)",
            "    node = Given(0.5, 0.5)(left, right)",
        ]
        walk = "node.backward()"
    return "\n".join(
        [
            "import time",
            *setup,
            "depth = 16  # one more level doubles the time of a walk that revisits",
            "for _ in range(depth):",
            *level,
            "start = time.process_time()",
            walk,
            'print(depth, "levels:", round(time.process_time() - start, 3), "s")',
        ]
    )


def judge_untouched(
    session: GradingSession,
    found: Sequence[Change],
    dag: Dag,
    kind: str,
    walk: str,
    snippet: str,
) -> None:
    """The walk ``walk`` left every node's value, and the gradient it was given, as it found
    them (``untouched``)."""
    untouched.fail_walk(found, dag.size, walk, session.assignment(kind), snippet)


@remembers_verdict
def check_topo(session: GradingSession, dag: Dag, on_timeout: WrongAnswer | None = None) -> None:
    snippet = dag_snippet(dag, "print(build_topo({root}))")
    answer = session.ask("micrograd", Probe.TOPO, {"dag": dag.to_json()}, snippet, on_timeout)
    judge_untouched(session, answer.changed, dag, "scalar", "build_topo", snippet)
    order = list(answer.order)
    problems = dag.topo_problems(order)
    if problems and not dag.topo_problems(order[::-1], root_first=True):
        # right read backwards: wrong only where the course's words put the root last
        convention = session.profile.of("micrograd").convention("order")
        problems = [*problems, convention.words] if convention.rule == "root_last" else []
    if problems:
        found = bugs.diagnose_topo(dag, order)
        raise WrongAnswer(
            "failed",
            "build_topo returned an invalid order",
            [f"order (as node numbers): {order}", *problems],
            snippet,
            found,
        )


@remembers_verdict
def check_backward(
    session: GradingSession,
    dag: Dag,
    passes: int = 1,
    on_timeout: WrongAnswer | None = None,
    *,
    roots: tuple[int, ...] = (),
    held: tuple[float, ...] = (),
) -> None:
    """``backward()`` over grader closures, ``passes`` times on the root, or on each of
    ``roots`` in turn (a graph in use: a second backward from an inner node), every node
    holding ``held`` before the first call where given (a graph that already holds
    gradients): after each call, every node's grad is what the contract gives
    (``Dag.backward_from``: the root's set to 1, every other added into). Where the course's
    ``build_topo`` is graded alone (``micrograd.topo``), it returns a correct order here (the
    nodes the root reaches, by number: their numbering is topological); where the order is
    built inside ``backward()`` (a profile's ``walk.topo: nested``), the whole walk is the
    student's."""
    roots = roots or (dag.size - 1,) * passes
    given = session.profile.of("micrograd").has(TOPO)
    orders = {root: sorted(dag.upto(root).reachable()) if given else None for root in roots}
    in_use = len(set(roots)) > 1 or bool(held)
    snippet = dag_snippet(dag, "\n".join(_backward_calls(dag, roots, orders, held, in_use)))
    case: dict[str, object] = {"dag": dag.to_json()}
    if in_use:
        case |= {"roots": [[root, orders[root]] for root in roots], "held": list(held)}
    else:
        (root,) = orders
        case |= {"passes": len(roots), "order": orders[root]}
    answer = session.ask("micrograd", Probe.BACKWARD, case, snippet, on_timeout)
    judge_untouched(session, answer.changed, dag, "scalar", "backward()", snippet)
    expected = dag.backward_from(list(roots), list(held))
    tol = session.tolerances["micrograd"]
    times = [0] * dag.size  # how often each node's closure has run, when all is right
    for number, (root, result, want) in enumerate(
        zip(roots, answer.passes, expected, strict=True), 1
    ):
        live = dag.upto(root).reachable()
        times = [t + (i in live) for i, t in enumerate(times)]
        on = f"n{root}." if in_use else ""
        label = f"after {on}backward() call {number}: " if len(roots) > 1 else ""
        grads, calls_made = result.grads, list(result.runs)
        twice = [i for i, c in enumerate(calls_made) if i >= dag.leaves and c != times[i]]
        calls = session.profile.of("micrograd").convention("calls")
        if twice and calls.charged:  # else the gradients below judge what the calls did
            found = bugs.diagnose_calls(calls_made, number)
            raise WrongAnswer(
                "failed",
                "a node's _backward ran the wrong number of times",
                [
                    f"{label}node(s) {twice} ran {[calls_made[i] for i in twice]}"
                    f" times, expected {[times[i] for i in twice] if in_use else number}",
                    calls.words,
                ],
                snippet,
                found,
            )
        wrong = [
            m
            for i, (got, exp) in enumerate(zip(grads, want, strict=True))
            if (m := mismatch(f"{label}n{i}.grad", got, np.float64(exp), tol))
        ]
        if wrong:
            found = [] if in_use else bugs.diagnose_backward(dag, grads, number)
            # a call after the first is graded on what the course says a second one does
            again = session.profile.of("micrograd").convention("second_backward").words
            told = [*([again] if number > 1 and again else []), *([SEEDED] if in_use else [])]
            raise WrongAnswer(
                "failed",
                "wrong gradients after backward()",
                [*wrong[:4], *told],
                snippet,
                found,
                partial(dag_figure, dag, want, grads, tol),
            )


SEEDED = (
    "backward() sets the grad of the node it is called on to 1, whatever that node held "
    "(a gradient from an earlier backward(), or any value), and adds into every other node "
    "it reaches: what they held stays and is added to."
)
"""Said where ``backward()`` on a graph that already holds gradients goes wrong."""


def _backward_calls(
    dag: Dag,
    roots: tuple[int, ...],
    orders: dict[int, list[int] | None],
    held: tuple[float, ...],
    in_use: bool,
) -> list[str]:
    """``check_backward``'s calls as a snippet writes them: the grads held, then each
    ``backward()``, after the grader's order where it gives one (written again only where it
    changes), printing every grad after each call (``in_use``), else once at the end."""
    grads = f"print([{', '.join(f'n{i}.grad' for i in range(dag.size))}])"
    lines = [f"n{i}.grad = {g!r}  # held from earlier use" for i, g in enumerate(held)]
    if any(order is not None for order in orders.values()):
        lines.append("import micrograd.engine")
    written = None
    for root in roots:
        order = orders[root]
        if order is not None and order != written:
            nodes = ", ".join(f"n{i}" for i in order)
            lines.append(
                f"micrograd.engine.build_topo = lambda root: [{nodes}]"
                "  # a correct order, as the grader gives it"
            )
            written = order
        lines.append(f"n{root}.backward()")
        if in_use:
            lines.append(grads)
    return lines if in_use else [*lines, grads]


@remembers_verdict
def check_zero_grad(
    session: GradingSession,
    dag: Dag,
    on_timeout: WrongAnswer | None = None,
    snippet: str | None = None,
    held: tuple[float, ...] = (),
) -> None:
    """``zero_grad`` resets every node the root reaches, each holding a non-zero grad, or
    ``held`` (a trained graph under a new root, whose grad, or an inner node's, is still 0:
    ``zero_grad`` resets every node, not only those it finds non-zero) (``snippet``: the
    example to show, else the graph written out)."""
    order = sorted(dag.reachable())
    reached = f"[{', '.join(f'n{i}' for i in order)}]"
    setup = (
        [f"n{i}.grad = {g!r}  # held from training" for i, g in enumerate(held)]
        if held
        else [f"for n in {reached}:  # every node the root reaches", "    n.grad = 1.0"]
    )
    snippet = snippet or dag_snippet(
        dag, "\n".join([*setup, "zero_grad({root})", f"print([n.grad for n in {reached}])"])
    )
    case = {"dag": dag.to_json(), "order": order}
    if held:
        case["held"] = list(held)
    answer = session.ask("micrograd", Probe.ZERO_GRAD, case, snippet, on_timeout)
    judge_untouched(session, answer.changed, dag, "scalar", "zero_grad", snippet)
    grads = answer.grads
    live = dag.reachable()
    left = [
        f"n{i}.grad: expected 0.0, got {float(g)}" if held else f"n{i}.grad is {float(g)}"
        for i, g in enumerate(grads)
        if i in live and (g is None or float(g) != 0.0)
    ]
    if left:
        told = [UNCONDITIONAL] if held else []
        raise WrongAnswer("failed", "zero_grad left gradients behind", [*left[:4], *told], snippet)


UNCONDITIONAL = (
    "zero_grad sets every node the root reaches to 0, walking on through nodes whose grad is "
    "already 0 (a new root built on a trained graph starts at 0, as may a node a step gave no "
    "gradient)."
)
"""Said where ``zero_grad`` over a graph in use leaves gradients behind."""


@remembers_verdict
def check_deep(session: GradingSession, length: int) -> None:
    """``build_topo`` over a chain of ``length`` grader nodes returns each node once (in
    any order, and beside anything else: whether the order is valid, and holds only nodes,
    is ``micrograd.topo``'s question)."""
    snippet = chain_snippet(length)
    answer = session.ask("micrograd", Probe.DEEP, {"length": length}, snippet)
    order = answer.order
    if sorted(i for i in order if i != -1) != list(range(length + 1)):  # -1: not a node
        raise WrongAnswer(
            "failed",
            "build_topo lost nodes of a long chain",
            [f"it returned {len(order)} entries for the {length + 1:,} nodes of the chain"],
            snippet,
        )


@remembers_verdict
def check_walk_cost(session: GradingSession, kind: str, depth: int) -> None:
    """The walk of the assignment of ``kind`` over a chain of ``depth`` diamonds finishes
    within the item's CPU budget, which a walk that revisits shared nodes
    (2**depth visits) does not.
    micrograd's order is also checked (that is ``micrograd.topo``'s subject), or where the
    course builds the order inside ``backward()`` its gradients and calls (``micrograd.backward``);
    babygrad's gradients are not: summing them on shared tensors is ``babygrad.accumulate``'s."""
    dag = diamonds(depth)
    budget = session.budgets.get(session.current_item, 5.0)
    assignment = session.assignment(kind)
    nested = kind == "scalar" and not session.profile.of(assignment.name).has(TOPO)
    if nested:
        walker = "backward()"
    elif kind == "scalar":
        walker = "build_topo"
    else:
        walker = tape_snippets.walker_name(assignment.api)
    failure = WrongAnswer(
        "failed",
        f"{walker} {EXPONENTIAL}",
        [
            f"it did not finish on a chain of {depth} diamonds ({dag.size} nodes) within "
            f"{budget:g} s of CPU time: each shared node was walked again from every path to "
            "it, 2 ** depth times",
            "Each level added to `depth` below doubles the time.",
        ],
        diamond_snippet(assignment, nested),
        [bugs.BUGS["revisits-shared-nodes"].describe()],
    )
    if nested:
        check_backward(session, dag, on_timeout=failure)
    elif kind == "scalar":
        check_topo(session, dag, on_timeout=failure)
    else:
        tensor_walk_cost(session, dag, dataclasses.replace(failure, bugs=[]))


def zero_grad_diamond_snippet(depth: int) -> str:
    """``check_zero_grad_cost``'s chain of diamonds, numbered as its nodes (n0 the leaf, then
    left, right and their sum on each level), every gradient set, then ``zero_grad``: how long
    it took (each level added doubles the time of a walk that revisits), and which nodes it
    left a gradient on."""
    return "\n".join(
        [
            "import time",
            MICROGRAD.imports.replace("Value", "Value, zero_grad"),
            f"depth = {depth}  # one more level doubles the time of a walk that revisits",
            "nodes = [Value(1.0)]",
            "for _ in range(depth):",
            "    left, right = Value(0.0, (nodes[-1],)), Value(0.0, (nodes[-1],))",
            "    nodes += [left, right, Value(0.0, (left, right))]",
            "for node in nodes:",
            "    node.grad = 1.0",
            "start = time.process_time()",
            "zero_grad(nodes[-1])",
            'print(depth, "levels:", round(time.process_time() - start, 3), "s")',
            'print("not reset:", [f"n{i}" for i, n in enumerate(nodes) if n.grad != 0.0])',
        ]
    )


@remembers_verdict
def check_zero_grad_cost(session: GradingSession, depth: int) -> None:
    """``zero_grad`` over a chain of ``depth`` diamonds finishes within the item's CPU
    budget, which a walk that goes into a shared node again from every path to it (2**depth
    visits) does not, and resets every node: a ``zero_grad`` that is fast because it walks
    nothing is not a fast walk. revisits-shared-nodes is named only where
    ``_zero_grad_revisits`` shows it."""
    dag = diamonds(depth)
    budget = session.budgets.get(session.current_item, 5.0)
    failure = WrongAnswer(
        "failed",
        "zero_grad ran out of time on shared nodes",
        [
            f"it did not finish on a chain of {depth} diamonds ({dag.size} nodes) within "
            f"{budget:g} s of CPU time, nor on {REVISIT_DEPTH} levels in a way that shows why",
            "A correct walk takes milliseconds here.",
        ],
        zero_grad_diamond_snippet(16),
    )
    try:
        check_zero_grad(session, dag, failure, zero_grad_diamond_snippet(depth))
    except WrongAnswer as exc:
        if exc is failure and (found := _zero_grad_revisits(session)):
            failure.reason = f"zero_grad {EXPONENTIAL}"
            failure.details = [
                f"it did not finish on a chain of {depth} diamonds ({dag.size} nodes) within "
                f"{budget:g} s of CPU time: each shared node was walked again from every path "
                "to it, 2 ** depth times",
                "Each level added to `depth` below doubles the time.",
            ]
            failure.bugs = found
        raise


def _zero_grad_revisits(session: GradingSession) -> list[str]:
    """After a ``zero_grad`` ran out of time on the diamonds: revisits-shared-nodes if, on
    ``REVISIT_DEPTH`` levels, it reads each node's ``_prev`` once per path to it (as
    ``_revisits`` asks of ``Tensor.backward``). Whatever goes wrong on this run names nothing
    and costs nothing."""
    dag = diamonds(REVISIT_DEPTH)
    answer = session.try_ask(
        "micrograd",
        Probe.ZERO_GRAD,
        {"dag": dag.to_json(), "order": sorted(dag.reachable()), "count_reads": True},
    )
    if answer is None or answer.reads is None:
        return []
    return bugs.diagnose_revisits(dag, list(answer.reads))


REVISIT_DEPTH = 8
"""Levels of diamonds on which a ``Tensor.backward`` (or ``zero_grad``) that ran out of time is
watched reading its tensors' inputs (nodes' ``_prev``): a walk that revisits reads the deepest
ones 2**8 times."""


def diamond_walk_snippet(api: TensorApi, depth: int) -> str:
    """The chain of diamonds of ``check_walk_cost``, numbered as its nodes (n0 the leaf, then
    left, right and their sum on each level), then ``backward()``: which tensors are left
    without a gradient, and whose backward ran in which order."""
    if (spelling := tape_snippets.spelling_of(api)) is not None:
        return tape_snippets.diamonds_snippet(spelling, depth)
    return "\n".join(
        [
            tensor_imports(api),
            tensor_helper(api),
            f"nodes = [{api.leaf_source('np.ones(1)', True)}]",
            f"for _ in range({depth}):",
            "    left, right = Given(1.0)(nodes[-1]), Given(1.0)(nodes[-1])",
            "    nodes += [left, right, Given(0.5, 0.5)(left, right)]",
            "nodes[-1].backward()",
            'print("without .grad:", [i for i, n in enumerate(nodes) if n.grad is None])',
            'print("backward ran on:", [next(i for i, m in enumerate(nodes) if m is n) '
            "for n in Given.ran])",
        ]
    )


@dataclass(frozen=True)
class TensorRun:
    """What the student's ``Tensor.backward`` did on a grader-made graph."""

    grads: list[np.ndarray | None]
    """Every node's ``.grad``."""
    calls: list[int]
    """The op nodes whose backward ran, in the order it ran."""
    changed: list[Change]
    """The nodes' values, and the gradient given, the walk changed (``untouched``)."""
    first: TensorRun | None = None
    """Where a walk from an op node below the root came first: what that walk did (its
    calls alone; ``changed`` holds both walks')."""
    ran_again: bool = False
    """An op's backward ran more than once: ``calls`` shows each op once where the course
    does not say once, but what a call again added is the walk's, not the ledger's."""
    once_words: str = ""
    """The course's own words saying each op's backward runs once a walk, where it says so
    (``conventions: calls``): a verdict that charges a call again quotes them."""
    walker: str = tape_snippets.WALKER
    """What the feedback calls the walk, in the course's words (``walker_name``)."""
    gradients: tuple[str, ...] = ()
    """How the feedback names each node's gradient, as the snippet reads it
    (``tape_snippets.dag_gradients``: ``n0.grad``, or 11-785's buffer entry)."""

    @property
    def kept(self) -> str:
        """What a node that requires grad must have after the walk, in the course's words."""
        return (
            ".grad after backward()"
            if self.walker == tape_snippets.WALKER
            else f"gradient after {self.walker}()"
        )


def tensor_backward(
    session: GradingSession,
    dag: Dag,
    shape: tuple[int, ...],
    snippet: str,
    on_timeout: WrongAnswer | None = None,
    *,
    frozen: tuple[int, ...] = (),
    grad: np.ndarray | None = None,
    wrap_leaves: bool = False,
    first: int | None = None,
    hands_back: bool = False,
    ledger: bool = False,
    tuples: tuple[int, ...] = (),
) -> TensorRun:
    """The student's ``Tensor.backward`` on grader-made ops (``probe_tensor_backward``): the
    leaves in ``frozen`` do not require grad; ``grad`` is the upstream gradient (None: call
    ``backward()``); ``wrap_leaves``: each leaf is the grader's op of a tensor, so the calls
    show when the walk reaches it; ``first``: ``backward()`` from that op node first, then
    from the root (``TensorRun.first``); ``hands_back``: an op hands ``out_grad`` back as it
    was given to every input of weight 1, as a real Add does (``given_sum``); ``ledger``: the
    ledger is graded, apart from the walk where a course adapter gives it apart (its
    ``ledger``: the grader's walk sums in the student's ledger); ``tuples``: the ops of one
    input that hand back a 1-tuple (``one_input_tuples``)."""
    case: dict[str, object] = {"dag": dag.to_json(), "shape": list(shape)}
    if tuples:
        case["tuples"] = list(tuples)
    if hands_back:
        case["hands_back"] = True
    if ledger:
        case["ledger"] = True
    if first is not None:
        case["first"] = first
    if frozen:
        case["frozen"] = list(frozen)
    if grad is not None:
        case["grad"] = np.asarray(grad, dtype=np.float64).tolist()
    if wrap_leaves:
        case["wrap_leaves"] = True
    answer = session.ask(
        session.assignment("tensor").name, Probe.TENSOR_BACKWARD, case, snippet, on_timeout
    )
    changed = list(answer.changed)
    calls = session.profile.of(session.assignment("tensor").name).convention("calls")
    once = calls.words if calls.charged else None
    api = session.assignment("tensor").api
    gradients = tape_snippets.dag_gradients(api, dag, wrap_leaves, ledger)
    before = None
    if answer.first is not None:
        before = _walked(answer.first, once, changed)
    run = _walked(answer.walk, once, changed, before)
    return dataclasses.replace(
        run, walker=tape_snippets.walker_name(api), gradients=tuple(gradients)
    )


def _walked(
    walk: Pass, once: str | None, changed: list[Change], before: TensorRun | None = None
) -> TensorRun:
    """A walk's gradients, and the op nodes whose backward it ran; where the course does not
    say each op's backward runs once (``conventions: calls``; ``once``: its words where it
    does, else None), a call again is not a walk's mistake: each op counts where its backward
    first ran."""
    calls = list(walk.calls)
    each = list(dict.fromkeys(calls))
    return TensorRun(
        list(walk.grads),
        calls if once is not None else each,
        changed,
        before,
        len(each) < len(calls),
        once or "",
    )


def _revisits(session: GradingSession) -> list[str]:
    """After a ``Tensor.backward`` ran out of time on the diamonds: revisits-shared-nodes if,
    on ``REVISIT_DEPTH`` levels, it reads each tensor's inputs once per path to it. Whatever
    goes wrong on this run (it raises or hangs as well) names nothing and costs nothing."""
    dag = diamonds(REVISIT_DEPTH)
    answer = session.try_ask(
        session.assignment("tensor").name,
        Probe.TENSOR_BACKWARD,
        {"dag": dag.to_json(), "shape": [1], "count_reads": True},
    )
    if answer is None or answer.reads is None:
        return []
    return bugs.diagnose_revisits(dag, list(answer.reads))


def judge_walk(
    dag: Dag, run: TensorRun, requires: list[bool], snippet: str, wrapped: bool = False
) -> None:
    """The walk alone, whatever the gradients' values: every op node that requires grad (the
    leaves too when ``wrapped``) had its backward run exactly once, after the backward of
    every op that uses its result, and every tensor that requires grad ends with a
    gradient."""
    live = dag.reachable()
    first = 0 if wrapped else dag.leaves
    missing = [i for i in sorted(live) if requires[i] and run.grads[i] is None]
    not_run = [i for i in sorted(live) if i >= first and requires[i] and i not in run.calls]
    if missing or not_run:
        details = (
            [
                f"{len(missing)} of the {sum(requires)} tensors that require grad have no "
                f"{run.kept}: {', '.join(f'n{i}' for i in missing[:12])}"
            ]
            if missing
            else []
        )
        if not_run:
            details.append(
                f"the backward of {len(not_run)} op(s) never ran: "
                f"{', '.join(f'n{i}' for i in not_run[:12])}"
            )
        raise WrongAnswer("failed", f"{run.walker} did not reach every tensor", details, snippet)
    problem = bugs.consumers_first(dag, run.calls)
    if problem:
        raise WrongAnswer(
            "failed",
            f"{run.walker} visits tensors out of order",
            [
                problem,
                "Visit the tensors in reverse topological order: a "
                "tensor after every tensor that uses it, each once.",
                *([run.once_words] if run.ran_again and run.once_words else []),
            ],
            snippet,
        )


def tensor_walk_cost(session: GradingSession, dag: Dag, failure: WrongAnswer) -> None:
    """babygrad's walk over the diamonds: within the item's CPU budget (``failure`` if not,
    naming revisits-shared-nodes only when ``_revisits`` shows it), and a walk (``judge_walk``):
    a walk that is fast because it walks nothing is not a fast walk."""
    depth = (dag.size - 1) // 3
    snippet = diamond_walk_snippet(session.assignment("tensor").api, depth)
    try:
        run = tensor_backward(session, dag, (1,), snippet, on_timeout=failure)
    except WrongAnswer as exc:
        if exc is failure:
            failure.bugs = _revisits(session)
            if not failure.bugs:  # out of time, but not seen revisiting: say no more
                budget = session.budgets.get(session.current_item, 5.0)
                walker = tape_snippets.walker_name(session.assignment("tensor").api)
                failure.reason = f"{walker} ran out of time on shared tensors"
                failure.details = [
                    f"it did not finish on a chain of {depth} diamonds ({dag.size} nodes) "
                    f"within {budget:g} s of CPU time, nor on {REVISIT_DEPTH} levels in a "
                    "way that shows why",
                    "A correct walk takes milliseconds here.",
                ]
        raise
    judge_walk(dag, run, [True] * dag.size, snippet)


@remembers_verdict
def check_walk_order(session: GradingSession, dag: Dag) -> None:
    """``Tensor.backward`` on a grader-made DAG with shared tensors, each leaf the grader's op
    of a tensor (so the calls show when the walk reaches the leaves too): the walk alone
    (``judge_walk``). The gradients' values are not judged: summing on shared tensors is
    ``babygrad.accumulate``'s."""
    tuples = one_input_tuples(session, dag, wrap_leaves=True)
    snippet = tensor_dag_snippet(
        session.assignment("tensor").api, dag, (1,), order=True, wrap_leaves=True, tuples=tuples
    )
    with told_tuples(session, tuples):
        run = tensor_backward(session, dag, (1,), snippet, wrap_leaves=True, tuples=tuples)
        judge_walk(dag, run, [True] * dag.size, snippet, wrapped=True)


@remembers_verdict
def check_tensor_backward(
    session: GradingSession,
    dag: Dag,
    shape: tuple[int, ...],
    frozen: tuple[int, ...] = (),
    grad: np.ndarray | None = None,
) -> None:
    """``Tensor.backward`` over grader-made weighted-sum ops (trees: nothing to sum), called
    with ``grad`` (None: ``backward()``, ones), the leaves in ``frozen`` not requiring grad:
    every tensor that requires grad gets ``grad`` times its known gradient, no other tensor
    any, and the walk is a walk (``judge_walk``)."""
    own = session.assignment("tensor")
    tuples = one_input_tuples(session, dag)
    snippet = tensor_dag_snippet(own.api, dag, shape, frozen, grad, tuples=tuples)
    with told_tuples(session, tuples):
        _tensor_backward_right(session, dag, shape, frozen, grad, tuples, snippet)


def _tensor_backward_right(
    session: GradingSession,
    dag: Dag,
    shape: tuple[int, ...],
    frozen: tuple[int, ...],
    grad: np.ndarray | None,
    tuples: tuple[int, ...],
    snippet: str,
) -> None:
    """``check_tensor_backward``'s run and verdict."""
    own = session.assignment("tensor")
    run = tensor_backward(session, dag, shape, snippet, frozen=frozen, grad=grad, tuples=tuples)
    untouched.fail_walk(run.changed, dag.size, run.walker, own, snippet)
    (want,) = dag.backward(1)
    seed = np.ones(shape) if grad is None else np.asarray(grad, dtype=np.float64)
    requires = bugs.requiring_grad(dag, frozen)
    tol = session.tolerances[session.assignment("tensor").name]
    live = dag.reachable()
    wrong = []
    for i, got in enumerate(run.grads):
        if i not in live:
            continue
        if not requires[i]:
            if got is not None:
                wrong.append(
                    f"{run.gradients[i]}: expected None (n{i} does not require grad), "
                    f"got {show(got)}"
                )
        elif m := mismatch(run.gradients[i], got, want[i] * seed, tol):
            wrong.append(m)
    if wrong:
        found = bugs.diagnose_tensor_backward(dag, run.grads, seed, frozen)
        expected = [want[i] * seed if requires[i] else None for i in range(dag.size)]
        raise WrongAnswer(
            "failed",
            f"wrong gradients from {run.walker}()",
            wrong[:4],
            snippet,
            found,
            partial(dag_figure, dag, expected, run.grads, tol),
        )
    judge_walk(
        dag,
        run,
        requires,
        tensor_dag_snippet(own.api, dag, shape, frozen, grad, order=True, tuples=tuples),
    )


def one_input_tuples(
    session: GradingSession, dag: Dag, wrap_leaves: bool = False
) -> tuple[int, ...]:
    """The grader's ops of one input that hand a walk their gradient as a 1-tuple: where the
    course's ops return a bare tensor or a 1-tuple (``conventions: single_gradient``), every
    other one (``Dag.tuple_singles``); elsewhere none (the worker gives 1-tuples to a walk
    only where the student's own ops give only those)."""
    name = session.assignment("tensor").name
    either = session.profile.of(name).convention("single_gradient").charged
    return dag.tuple_singles(wrap_leaves) if either else ()


@contextlib.contextmanager
def told_tuples(session: GradingSession, tuples: tuple[int, ...]) -> Iterator[None]:
    """A walk that fails where some of the grader's ops of one input hand back a 1-tuple is
    told so, in the course's own words."""
    try:
        yield
    except WrongAnswer as exc:
        if tuples:
            name = session.assignment("tensor").name
            words = session.profile.of(name).convention("single_gradient").words
            exc.details = [*exc.details, ONE_INPUT_TUPLES, words]
        raise


ONE_INPUT_TUPLES = (
    "Here the grader's ops made as_tuple=True hand back their one input's gradient as a "
    "1-tuple, the others a bare tensor, as the course's own ops do: a walk takes either."
)


def second_walk_snippet(api: TensorApi, dag: Dag, first: int, shape: tuple[int, ...]) -> str:
    """``check_second_walk``'s graph: ``backward()`` from node ``first``, then from the root
    built on it, printing every gradient after each."""
    lines = tensor_dag_snippet(api, dag, shape).splitlines()[:-2]  # the graph, not its walk
    grads = f"[{', '.join(f'n{i}.grad' for i in range(dag.size))}]"
    return "\n".join(
        [
            *lines,
            f"n{first}.backward()  # a walk from a node of the graph",
            f"print({grads})",
            f"n{dag.size - 1}.backward()  # then from a root built on what was walked",
            f"print({grads})",
        ]
    )


KEPT_STATE = (
    "Each backward() walks anew: a visited set or an order kept from an earlier call "
    "(a module-level or default-argument container) leaves out, or walks again, what that "
    "call saw."
)
"""Said where a walk from a root built on a walked graph goes wrong."""


@remembers_verdict
def check_second_walk(
    session: GradingSession, dag: Dag, first: int, shape: tuple[int, ...]
) -> None:
    """``Tensor.backward`` from op node ``first``, then from the root built on it (a tree: no
    tensor receives two shares, so the ledger's sums are not graded here): after each walk,
    every tensor it reaches has the gradient the course's ``walk.second_backward`` gives it
    (``Dag.walks``: overwritten, or added to what the first walk left; either, where the
    course does not say), and the second walk runs each op's backward once, consumers first.
    A walk that keeps what it saw between calls (a visited set, an order) loses, or walks
    again, what it saw the first time."""
    own = session.assignment("tensor")
    snippet = second_walk_snippet(own.api, dag, first, shape)
    run = tensor_backward(session, dag, shape, snippet, first=first)
    assert run.first is not None
    untouched.fail_walk(run.changed, dag.size, "Tensor.backward", own, snippet)
    tol = session.tolerances[own.name]
    root = dag.size - 1
    rule = session.profile.of(own.name).walk.second_backward
    rules = tuple(SECOND_GRADS) if rule == "unspecified" else (rule,)
    found = [_second_walk_mismatch(dag, run, first, each, tol, shape) for each in rules]
    if all(found):
        start, wrong, walked, want = found[0]
        second = start == root
        words = session.profile.of(own.name).convention("second_backward").words
        told = [SECOND_GRADS.get(rule, EITHER_GRADS), *([words] if words else []), KEPT_STATE]
        raise WrongAnswer(
            "failed",
            "wrong gradients from a second Tensor.backward()"
            if second
            else "wrong gradients from Tensor.backward()",
            [*wrong[:4], *(told if second else [])],
            snippet,
            [],
            partial(dag_figure, dag, want, walked.grads, tol),
        )
    try:
        judge_walk(dag, run, [True] * dag.size, snippet)
    except WrongAnswer as exc:
        exc.details = [
            f"in the walk from n{root}, the root built on n{first}",
            *exc.details,
            KEPT_STATE,
        ]
        raise


def _second_walk_mismatch(
    dag: Dag, run: TensorRun, first: int, rule: str, tol: Tolerance, shape: tuple[int, ...]
) -> tuple[int, list[str], TensorRun, list[np.ndarray | None]] | None:
    """The first of the two walks whose gradients ``rule`` (``Dag.walks``) does not give:
    where it started, what is wrong, the walk and what was wanted; None if both are right."""
    ones = np.ones(shape)
    root = dag.size - 1
    for walked, start, want in zip(
        (run.first, run), (first, root), dag.walks([first, root], rule), strict=True
    ):
        label = f"after n{start}.backward(): "
        wrong = [
            m
            for i, got in enumerate(walked.grads)
            if want[i] is not None
            and (m := mismatch(f"{label}n{i}.grad", got, want[i] * ones, tol))
        ]
        if wrong:
            return start, wrong, walked, [None if w is None else w * ones for w in want]
    return None


SECOND_GRADS = {
    "overwrite": "In this course a second backward() gives each tensor it reaches that walk's "
    "gradient (it overwrites .grad).",
    "accumulate": "In this course a second backward() adds each tensor's gradient to the .grad "
    "an earlier one left.",
}
EITHER_GRADS = (
    "This course does not say whether a second backward() overwrites .grad or adds to it: "
    "either is right, and this is neither."
)
