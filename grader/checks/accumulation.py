"""Gradients from several uses add up: ``+=`` in every micrograd closure, and babygrad's
ledger. Both are judged against the student's own answers with the uses taken apart, so a
wrong derivative or a wrong walk (each its own item) cancels out."""

from __future__ import annotations

import numpy as np

from grader.checks import bugs
from grader.checks.figures import graph_figure
from grader.checks.judge import WrongAnswer, mismatch, show
from grader.checks.walks import tensor_backward
from grader.grading.session import GradingSession, recorded
from grader.language.dags import Dag
from grader.language.graphs import MICROGRAD_PRIMITIVES, Graph, build_source, evaluate, names
from grader.language.snippets import IMPORTS, WALK_HELPER, tensor_dag_snippet


def accumulate_snippet(graph: Graph, out_grad: float, preload: list[float]) -> str:
    """Gradients already holding something, then the op's own ``_backward`` (one op) or the
    grader's walk (several): each leaf should end at what it held plus its contributions."""
    var = names(graph)
    leaves = var[: len(graph.leaves)]
    out = var[graph.output]
    held = [f"{v}.grad = {p!r}  # already there, from another use" for v, p in
            zip(leaves, preload, strict=True)]
    one_op = len(graph.nodes) == 1 and graph.nodes[0].op in MICROGRAD_PRIMITIVES
    helper, run = ([], f"{out}._backward()") if one_op else ([WALK_HELPER], f"walk({out})")
    grads = ", ".join(f"{v}.grad" for v in leaves)
    return "\n".join([IMPORTS["scalar"], *helper, build_source(graph, "micrograd"), *held,
                      f"{out}.grad = {out_grad!r}", run, f"print({grads})"])


@recorded
def check_accumulate(session: GradingSession, graph: Graph, out_grad: float,
                     preload: list[float]) -> None:
    """Every ``_backward`` adds into its operands' gradients: with each leaf's gradient
    preloaded, a leaf must end at its preload plus what its uses contribute when taken
    apart (``probe_accumulate``). The engine's own derivatives are on both sides, so a
    wrong derivative costs its op item, never this one."""
    snippet = accumulate_snippet(graph, out_grad, preload)
    answer = session.ask("micrograd", "accumulate", {"graph": graph.to_json(),
                                                  "out_grad": out_grad, "preload": preload},
                      lambda: snippet)
    var = names(graph)[: len(graph.leaves)]
    separate = session.decoded(answer, "separate", var, [()] * len(var), snippet)
    preloaded = session.decoded(answer, "preloaded", var, [()] * len(var), snippet)
    tol = session.tolerances["micrograd"]
    wrong = [m for v, p, s, got in zip(var, preload, separate, preloaded, strict=True)
             if (m := mismatch(f"{v}.grad (held {p:g} before; its uses add "
                               f"{float(s):.6g})", got, np.float64(p + float(s)), tol))]
    if wrong:
        ops = sorted({node.op for node in graph.nodes} - {"add"} or {"add"})
        values = evaluate(graph)
        want = [np.float64(p + float(s)) for p, s in zip(preload, separate, strict=True)]
        raise WrongAnswer("failed", f"{', '.join(ops)}: a _backward overwrote a gradient",
                           wrong[:4], snippet, [bugs.BUGS["overwrite-grad"].describe()],
                           lambda: graph_figure(graph, values, values, want, preloaded, tol))


@recorded
def check_ledger(session: GradingSession, dag: Dag, shape: tuple[int, ...]) -> None:
    """``Tensor.backward``'s ledger sums: on grader-made ops, each node's gradient on a DAG
    must be the sum of its copies' gradients on the same DAG unrolled into a tree, both from
    the student's own ``Tensor.backward``. A walk that is wrong on trees is wrong the same
    way on both (``babygrad.backward`` grades it); only losing a contribution differs."""
    tree, owners = dag.unrolled()
    snippet = tensor_dag_snippet(dag, shape)
    shared = tensor_backward(session, dag, shape, snippet)
    apart = tensor_backward(session, tree, shape, tensor_dag_snippet(tree, shape))
    tol = session.tolerances["babygrad"]
    wrong = []
    for index, got in enumerate(shared):
        copies = [g for g, owner in zip(apart, owners, strict=True) if owner == index]
        if len(copies) < 2 or any(c is None for c in copies):
            continue  # not shared, or left without .grad by the walk (babygrad.backward's)
        total = np.sum(copies, axis=0)
        if (m := mismatch(
                f"n{index}.grad (used {len(copies)} times; the uses apart add up to "
                f"{show(total)})", got, total, tol)):
            wrong.append(m)
    if wrong:
        raise WrongAnswer("failed", "Tensor.backward lost a contribution to a shared tensor",
                           wrong[:4], snippet, [bugs.BUGS["overwrite-grad"].describe()])
