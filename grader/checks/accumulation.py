"""Gradients from several uses add up: ``+=`` in every micrograd closure, and babygrad's
ledger. Both are judged against the student's own answers with the uses taken apart, so a
wrong derivative or a wrong walk (each its own item) cancels out."""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.checks import bugs, records
from grader.checks.session import GradingSession, NotGradable, remembers_verdict
from grader.checks.walks import TensorRun, tensor_backward
from grader.language import adapters, tape_snippets
from grader.language.assignments import MICROGRAD
from grader.language.coverage import shared_strata
from grader.language.dags import Dag
from grader.language.figures import graph_figure
from grader.language.graphs import (
    MICROGRAD_COMPOSED,
    MICROGRAD_PRIMITIVES,
    Graph,
    build_source,
    evaluate,
    names,
)
from grader.language.snippets import RECORDING, tensor_dag_snippet
from grader.language.tensor_api import TensorApi
from grader.language.verdicts import Tolerance, WrongAnswer, mismatch, show
from grader.worker import protocol
from grader.worker.protocol import Probe
from grader.worker.recording import SCALAR_PRIMITIVES
from grader.worker.replies import Accumulated


def accumulate_snippet(graph: Graph, out_grad: float, preload: list[float]) -> str:
    """Gradients already holding something, then each op node's own ``_backward``, the last
    first, as the grader runs them (``probe_accumulate``): each leaf should end at what it held
    plus its contributions. A graph of primitives names every node, so the calls are written
    out; a composed operator (``a - b``) makes nodes of its own, so the snippet records every
    ``Value`` made, as the grader does, and calls each one's closure but the leaves'."""
    var = names(graph)
    leaves = var[: len(graph.leaves)]
    out = var[graph.output]
    held = [
        f"{v}.grad = {p!r}  # already there, from another use"
        for v, p in zip(leaves, preload, strict=True)
    ]
    build = build_source(graph, "micrograd")
    if any(node.op in MICROGRAD_COMPOSED for node in graph.nodes):
        build = "\n".join([RECORDING, build, "Value.__init__ = init"])
        run = [
            f"for node in reversed(made[{len(leaves)}:]):  # newest first; not the leaves",
            "    node._backward()",
        ]
    else:
        run = [f"{var[index]}._backward()" for index in range(graph.output, len(leaves) - 1, -1)]
    grads = ", ".join(f"{v}.grad" for v in leaves)
    return "\n".join(
        [MICROGRAD.imports, build, *held, f"{out}.grad = {out_grad!r}", *run, f"print({grads})"]
    )


OP_ITEMS = {
    "add": "micrograd.ops.add",
    "add_scalar": "micrograd.ops.add",
    "mul": "micrograd.ops.mul",
    "mul_scalar": "micrograd.ops.mul",
    "powk": "micrograd.ops.pow",
    "tanh": "micrograd.ops.tanh",
    "exp": "micrograd.ops.exp",
    "relu": "micrograd.ops.relu",
}
"""The item that grades each primitive op of the graph language alone."""


def _right(
    session: GradingSession, split: Graph, out_grad: float, answer: Accumulated
) -> list[np.ndarray] | bool:
    """A separate run's copies' gradients if its values and gradients are the oracles'
    (``Evaluation`` grads are for a seed of 1: they scale with ``out_grad``); False if they
    are not (or are not numbers), or if an op's result is one of its own operands (then the
    walk seeds that operand and skips its closure: right numbers, and a preload lost to no
    ``=``); True if they are not and no second oracle agrees with the first, so nothing can
    be said. A composition run reports what was built (``record``): its gradients are
    computed here (``grader.checks.records``)."""
    built = answer.built
    if built is None or answer.operand_returned:
        return False
    expected = session.oracles.expected(split)
    var = names(split)
    values = built.values
    if built.record is not None:
        try:
            grads = records.named_gradients(session, split.kind, built.record, out_grad)
        except protocol.InvalidAnswer:
            return False
        grads = grads[: len(split.leaves)]
    else:
        grads = built.grads
    tol = session.oracles.tolerance(session.tolerances["micrograd"], split)
    wrong = any(
        mismatch(v, got, want, tol)
        for v, got, want in zip(
            [*var, *var[: len(split.leaves)]],
            [*values, *grads],
            [*expected.values, *(g * out_grad for g in expected.grads)],
            strict=True,
        )
    )
    if not wrong:
        return [g for g in grads if g is not None]
    return not session.oracles.confirmed(split, None, expected)


def _needs(
    session: GradingSession, graph: Graph, split: Graph, out_grad: float, case: dict[str, Any]
) -> tuple[str, ...]:
    """The items that must pass before this example can grade ``=`` vs ``+=``.

    One primitive op: its item. Otherwise the uses apart run again on the grader's own
    primitives (``composition``): wrong there, the sugar is composed wrong
    (``micrograd.sugar``); right, then once with each primitive it called left the engine's
    own: those that go wrong alone are the ones to fix (all it called, if none does alone)."""
    ops = [node.op for node in graph.nodes]
    if len(ops) == 1 and ops[0] in OP_ITEMS:
        return (OP_ITEMS[ops[0]],)
    sugar = any(op in MICROGRAD_COMPOSED for op in ops)
    fallback = ("micrograd.sugar",) if sugar else tuple(dict.fromkeys(OP_ITEMS[op] for op in ops))

    def works(own: list[str]) -> Accumulated | None:
        """The composition run's answer where it is right, else None."""
        answer = session.try_ask(
            "micrograd", Probe.ACCUMULATE, {**case, "run": "composition", "own": own}
        )
        if answer is None or _right(session, split, out_grad, answer) is False:
            return None
        return answer

    answer = works([])
    used = answer.used if answer is not None else None
    if not used or not set(used) <= set(SCALAR_PRIMITIVES.values()):
        return fallback
    mine = [OP_ITEMS[op].removeprefix("micrograd.ops.") for op in ops if op in OP_ITEMS]
    used = [op for op in dict.fromkeys([*mine, *sorted(used)]) if op in used]  # own ops first
    broken = [op for op in used if works([op]) is None] or used
    return tuple(f"micrograd.ops.{op}" for op in broken)


@remembers_verdict
def check_accumulate(
    session: GradingSession, graph: Graph, out_grad: float, preload: list[float]
) -> None:
    """Every ``_backward`` adds into its operands' gradients: with each leaf's gradient
    preloaded, a leaf must end at its preload plus what its uses contribute when taken
    apart (``probe_accumulate``).

    The uses taken apart run first, on the engine's own ops, and must give the oracles'
    values and gradients: where they do not (an op raised, hung, crashed, is missing or is
    wrong), or an op's result is one of its operands (``return self``), ``=`` vs ``+=``
    cannot be told here, the example is not gradable until the items of those ops pass
    (``NotGradable``), and only their items lose points. The engine's own derivatives are
    then on both sides of the comparison."""
    snippet = accumulate_snippet(graph, out_grad, preload)
    case = {"graph": graph.to_json(), "out_grad": out_grad, "preload": preload}
    split, owners = graph.split_leaves()
    answer = session.try_ask("micrograd", Probe.ACCUMULATE, {**case, "run": "separate"})
    copies = False if answer is None else _right(session, split, out_grad, answer)
    if copies is True:
        return  # the oracles disagree on the uses apart: this example says nothing
    if copies is False:
        if session.failures.get(session.current_test) is not None:
            return  # shrinking a failure found before: this example is simply not it
        raise NotGradable(_needs(session, graph, split, out_grad, case))
    answer = session.ask("micrograd", Probe.ACCUMULATE, {**case, "run": "preloaded"}, snippet)
    var = names(graph)[: len(graph.leaves)]
    preloaded = answer.preloaded
    uses = _uses(graph, copies, owners)
    tol = session.tolerances["micrograd"]
    wrong = [
        m
        for v, p, mine, got in zip(var, preload, uses, preloaded, strict=True)
        if (
            m := mismatch(
                f"{v}.grad (held {p:g} before; its uses add {sum(mine):.6g})",
                got,
                np.float64(p + sum(mine)),
                tol,
            )
        )
    ]
    if wrong:
        ops = sorted({node.op for node in graph.nodes} - {"add"} or {"add"})
        values = evaluate(graph)
        want = [np.float64(p + sum(mine)) for p, mine in zip(preload, uses, strict=True)]
        raise WrongAnswer(
            "failed",
            f"{', '.join(ops)}: a _backward overwrote a gradient",
            wrong[:4],
            snippet,
            _overwrite(session, graph, bugs.diagnose_accumulate(preload, uses, preloaded, tol)),
            lambda: graph_figure(graph, values, values, want, preloaded, tol),
        )


def _uses(graph: Graph, copies: list[np.ndarray], owners: list[int]) -> list[list[float]]:
    """What each use of each leaf contributes, from the uses apart (``copies``, each the copy
    of leaf ``owners[i]``)."""
    return [
        [float(c) for c, owner in zip(copies, owners, strict=True) if owner == leaf]
        for leaf in range(len(graph.leaves))
    ]


CALLED = {"add_scalar": "add", "mul_scalar": "mul"}
"""The sugar that is a primitive itself (``a + 2``, ``a * 2``)."""
COMPOSED_FROM = ("add", "mul", "powk")
"""The primitives micrograd's sugar is composed from (``a - b``, ``a / b``, ``-a``...)."""


def _overwrite(session: GradingSession, graph: Graph, found: list[str]) -> list[str]:
    """``found`` (``diagnose_accumulate``'s name for this example), kept only where an
    ``=`` shows alone: on one primitive the graph calls, on one node used twice with its
    gradient preloaded (``shared_strata``). One example fits other mistakes too: in ``a - a``
    a ``+`` that adds ``self.grad`` into ``other.grad`` also ends ``a`` at 0, as an ``=``
    would, and a named bug must be right or absent."""
    if not found:
        return found
    ops = {CALLED.get(node.op, node.op) for node in graph.nodes}
    called = [op for op in MICROGRAD_PRIMITIVES if op in ops]
    if ops & set(MICROGRAD_COMPOSED):
        called += [op for op in COMPOSED_FROM if op not in called]
    for op in called:
        for alone, out_grad, preload in shared_strata(op):
            if _overwrites_alone(session, alone, out_grad, preload):
                return found
    return []


def _overwrites_alone(
    session: GradingSession, graph: Graph, out_grad: float, preload: list[float]
) -> bool:
    """Does ``graph`` (one primitive on one leaf used twice) lose its leaf's preload as an
    ``=`` in a closure does? Asked as ``check_accumulate`` asks, charging the test nothing."""
    case = {"graph": graph.to_json(), "out_grad": out_grad, "preload": preload}
    split, owners = graph.split_leaves()
    answer = session.try_ask("micrograd", Probe.ACCUMULATE, {**case, "run": "separate"})
    copies = False if answer is None else _right(session, split, out_grad, answer)
    answer = session.try_ask("micrograd", Probe.ACCUMULATE, {**case, "run": "preloaded"})
    if not isinstance(copies, list) or answer is None:
        return False
    tol = session.tolerances["micrograd"]
    return bool(
        bugs.diagnose_accumulate(preload, _uses(graph, copies, owners), answer.preloaded, tol)
    )


@remembers_verdict
def check_ledger(
    session: GradingSession, dag: Dag, shape: tuple[int, ...], hands_back: bool = False
) -> None:
    """``Tensor.backward``'s ledger sums: on grader-made ops, each node's gradient on a DAG
    must be the sum of its copies' gradients on the same DAG unrolled into a tree, both from
    the student's own ``Tensor.backward``. A walk that is wrong on trees is wrong the same
    way on both (``babygrad.backward`` grades it); only losing a contribution differs. A walk
    out of order (an op's backward run before that of an op using its result, or twice) is
    ``babygrad.backward``'s too: it grades nothing here. A walk that ran no op's backward at
    all propagated nothing, so it has summed nothing: it fails. With ``hands_back`` the ops
    hand ``out_grad`` back as they were given it, one tensor to every input, as Add does:
    a ledger that sums in place into a gradient it was handed changes every tensor holding
    the same array, so every tensor's gradient is compared, not only the shared ones'."""
    tree, owners = dag.unrolled()
    api = session.assignment("tensor").api
    spelling = tape_snippets.spelling_of(api)
    # a course adapter may give the ledger apart from the walk: the grader's walk sums into it
    ledger_apart = bool(api.adapter) and adapters.ledger_apart(api.adapter_source)
    spelled = spelling is not None and "ledger" in spelling

    def ledger_snippet(graph: Dag) -> str:
        assert spelling is not None
        return tape_snippets.ledger_snippet(
            spelling, graph, shape, wrap_leaves=True, hands_back=hands_back
        )

    snippet = (
        ledger_snippet(dag)
        if spelled
        else handed_back_snippet(api, dag, shape)
        if hands_back
        else tensor_dag_snippet(api, dag, shape, wrap_leaves=True)
    )
    run = tensor_backward(
        session, dag, shape, snippet, wrap_leaves=True, hands_back=hands_back, ledger=ledger_apart
    )
    apart_snippet = (
        ledger_snippet(tree)
        if spelled
        else tensor_dag_snippet(api, tree, shape, wrap_leaves=True, hands_back=hands_back)
    )
    apart_run = tensor_backward(
        session,
        tree,
        shape,
        apart_snippet,
        wrap_leaves=True,
        hands_back=hands_back,
        ledger=ledger_apart,
    )
    if not run.calls or not apart_run.calls:
        raise WrongAnswer(
            "failed",
            f"{run.walker} propagated nothing",
            [
                "no op's backward ran: a gradient reaches the tensors under the "
                "output only through their ops' backward, added into the ledger"
            ],
            tensor_dag_snippet(api, dag, shape, order=True, wrap_leaves=True),
        )
    if (
        run.ran_again
        or apart_run.ran_again
        or bugs.consumers_first(dag, run.calls)
        or bugs.consumers_first(tree, apart_run.calls)
    ):
        return
    shared, apart = run.grads, apart_run.grads
    tol = session.tolerances[session.assignment("tensor").name]
    # what lost a sum: the student's walk, or their ledger apart, summed by the grader's walk
    summer = tape_snippets.ledger_name(api) if ledger_apart else run.walker
    if ledger_apart:
        _judge_sums(tree, apart_run.grads, shape, tol, apart_snippet, summer)
    wrong = []
    for index, got in enumerate(shared):
        copies = [g for g, owner in zip(apart, owners, strict=True) if owner == index]
        if len(copies) < (1 if hands_back else 2) or any(c is None for c in copies):
            continue  # not shared, or left without .grad by the walk (babygrad.backward's)
        total = np.sum(copies, axis=0)
        used = (
            f"used {len(copies)} times; the uses apart add up to"
            if len(copies) > 1
            else ("used once; apart it gets")
        )
        if m := mismatch(f"{run.gradients[index]} ({used} {show(total)})", got, total, tol):
            wrong.append(m)
    if wrong:
        told = [IN_PLACE] if hands_back else []
        raise WrongAnswer(
            "failed",
            f"{summer} lost a contribution to a shared tensor"
            if not hands_back
            else f"{summer}'s sums changed gradients an op handed back",
            [*wrong[:4], *told],
            snippet,
            _ledger_overwrites(session, dag, run, shape, hands_back, ledger_apart),
        )


UNLIKE_USES = Dag(1, (((0, 1.0),), ((1, 2.0), (1, -0.5))))
"""One tensor used twice with unlike weights: a ledger that keeps the last contribution (an
``=``) and one that keeps the first (a sum never written) give it different gradients."""


def _ledger_overwrites(
    session: GradingSession,
    dag: Dag,
    run: TensorRun,
    shape: tuple[int, ...],
    hands_back: bool,
    ledger: bool,
) -> list[str]:
    """overwrite-grad where this example shows an ``=`` in the ledger (``diagnose_ledger``),
    or where it fits one and the ledger keeps the last of two unlike uses (``UNLIKE_USES``,
    asked charging the test nothing): a shrunk example's uses are often alike, and then a
    ledger that drops every contribution but the first fits it as well."""
    found = bugs.diagnose_ledger(dag, run.grads, run.calls, shape)
    if found or not bugs.keeps_one(dag, run.grads, run.calls, shape):
        return found
    try:
        unlike = tensor_backward(
            session, UNLIKE_USES, shape, "", wrap_leaves=True, hands_back=hands_back, ledger=ledger
        )
    except WrongAnswer:
        return []
    return bugs.diagnose_ledger(UNLIKE_USES, unlike.grads, unlike.calls, shape)


def _judge_sums(
    tree: Dag,
    grads: list[np.ndarray | None],
    shape: tuple[int, ...],
    tol: Tolerance,
    snippet: str,
    ledger: str,
) -> None:
    """A ledger apart from the walk (``tape_snippets``: the grader's walk summed into it, the
    feedback calling it ``ledger``) on a tree, where each tensor gets one known gradient:
    comparing its DAG with its tree alone would pass a ledger that sums nothing (zeros both
    times)."""
    (want,) = tree.backward(1)
    wrong = [
        m
        for i, got in enumerate(grads[:-1])
        if (m := mismatch(f"n{i}'s entry", got, want[i] * np.ones(shape), tol))
    ]
    if wrong:
        raise WrongAnswer(
            "failed",
            f"{ledger} does not hold what was added into it",
            [*wrong[:4], "Each tensor's entry must be the sum of every gradient added into it."],
            snippet,
        )


IN_PLACE = (
    "An op may hand out_grad back unchanged, the same tensor to each input (Add does): sum "
    "into a new array (ledger[k] = ledger[k] + g), never in place (+= on an array or a "
    "tensor's data), or every tensor holding that array changes with it."
)
"""Said where a ledger's sums go wrong only when ops hand ``out_grad`` back unchanged."""


def handed_back_snippet(api: TensorApi, dag: Dag, shape: tuple[int, ...]) -> str:
    """``check_ledger``'s graph with ops that hand ``out_grad`` itself back (as Add does),
    then ``backward()``, printing every tensor's gradient."""
    lines = tensor_dag_snippet(api, dag, shape, wrap_leaves=True, hands_back=True).splitlines()
    grads = ", ".join(api.grad_source(f"n{i}.grad") for i in range(dag.size))
    return "\n".join([*lines[:-1], f"print([{grads}])"])
