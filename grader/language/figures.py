"""The counterexample as data for a picture: one node per graph node, one edge per operand use.

A figure is plain JSON (it travels in the results file): nodes carry their op, value, the
expected and the student's gradient, and whether something about them is wrong. A shared node
appears once with every edge into its consumers, since that is where accumulation bugs live.
Like a snippet (``grader.language.snippets``), it is built from the graph language alone, from
answers already decoded; rendering (Graphviz or text) is the reports' job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from grader.language.dags import Dag
from grader.language.graphs import Graph, names
from grader.language.verdicts import Tolerance, show

Figure = dict[str, Any]


def _text(value: np.ndarray | float | None) -> str | None:
    return None if value is None else show(np.asarray(value, dtype=np.float64))


def _node(
    ident: str,
    op: str,
    value: Any,
    expected: Any,
    got: Any,
    tol: Tolerance,
    value_wrong: bool = False,
) -> dict[str, Any]:
    grad_wrong = expected is not None and (
        got is None or not tol.close(np.asarray(got, np.float64), np.asarray(expected, np.float64))
    )
    return {
        "id": ident,
        "op": op,
        "value": _text(value),
        "expected": _text(expected),
        "got": _text(got),
        "wrong": bool(grad_wrong or value_wrong),
    }


def graph_figure(
    graph: Graph,
    expected_values: Sequence[np.ndarray],
    got_values: Sequence[np.ndarray | None],
    expected_grads: Sequence[np.ndarray],
    got_grads: Sequence[np.ndarray | None],
    tol: Tolerance,
) -> Figure:
    """A graph probe: leaves carry expected and got gradients; every node its value."""
    var = names(graph)
    nodes = []
    for index in range(graph.size):
        op = "leaf" if index < len(graph.leaves) else graph.nodes[index - len(graph.leaves)].op
        got_value = got_values[index] if index < len(got_values) else None
        value_wrong = got_value is None or not tol.close(got_value, expected_values[index])
        expected = expected_grads[index] if index < len(expected_grads) else None
        got = got_grads[index] if index < len(got_grads) else None
        nodes.append(_node(var[index], op, expected_values[index], expected, got, tol, value_wrong))
    edges = [
        {"from": var[a], "to": var[index]}
        for index in range(len(graph.leaves), graph.size)
        for a in graph.operands(index)
    ]
    return {"nodes": nodes, "edges": edges}


def dag_figure(
    dag: Dag, expected_grads: Sequence[float], got_grads: Sequence[Any], tol: Tolerance
) -> Figure:
    """A grader-made graph: node n_i, edges labelled with their local gradient (weight)."""
    nodes = [
        _node(
            f"n{i}",
            "leaf" if i < dag.leaves else "given",
            None,
            expected_grads[i],
            got_grads[i],
            tol,
        )
        for i in range(dag.size)
    ]
    edges = [
        {"from": f"n{operand}", "to": f"n{dag.leaves + k}", "label": f"x{weight:g}"}
        for k, pairs in enumerate(dag.nodes)
        for operand, weight in pairs
    ]
    return {"nodes": nodes, "edges": edges}
