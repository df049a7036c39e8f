"""Whole graphs built with operators and methods, their gradients compared with the oracles."""

from __future__ import annotations

from grader.checks import bugs, records, untouched
from grader.checks.session import GradingSession, remembers_verdict
from grader.language.figures import graph_figure
from grader.language.graphs import Graph
from grader.language.snippets import graph_text
from grader.language.verdicts import WrongAnswer, mismatch
from grader.worker.answers import Change
from grader.worker.protocol import Probe

NOTES = {
    Probe.GRAPH: "",
    Probe.ROUTING: (
        "(graded with the grader's own forward in every ops class, the grader "
        "computing the gradients of what was built, so only which ops the operators "
        "and methods reach counts here; the snippet runs your whole engine)"
    ),
    Probe.SUGAR: (
        "(graded with the grader's own +, *, **, tanh, exp, relu, the grader computing "
        "the gradients of what was built from them, so only how the other operators "
        "are built counts here; the snippet runs your whole engine)"
    ),
}
"""What each way of building a graph leaves to the student, said on failure."""


@remembers_verdict
def check_graph(session: GradingSession, graph: Graph, probe: Probe = Probe.GRAPH) -> None:
    """A graph built with operators and methods, its gradients compared with the oracles.

    ``probe`` says what is the student's: ``graph`` everything (their ops and their
    ``backward()``); ``routing`` (babygrad) only which ops operators and methods reach, on
    the grader's ops; ``sugar`` (micrograd) only how operators are composed from the
    primitives, on the grader's primitives. Those two are recorded as built, and the
    gradients of what was built computed here (``grader.checks.records``)."""
    expected = session.oracles.expected(graph)
    own = session.item_assignment
    shown = graph_text(graph, own)
    answer = session.ask(own.name, probe, {"graph": graph.to_json()}, shown.source)

    def caller(change: Change) -> str:
        """Who changed a node: the line that made ``change.during``, or the walk."""
        return shown.walk if change.during is None else shown.lines[change.during]

    # every op's forward leaves the nodes made before it as it found them, and backward()
    # every node (only the graph probe watches)
    untouched.fail_nodes(answer.changed, shown.names, caller, own, shown.source)
    values = answer.values
    grads = answer.grads
    if answer.record is not None:
        grads = records.named_gradients(session, graph.kind, answer.record)
    tol = session.oracles.tolerance(session.tolerances[own.name], graph)
    wrong_values = [
        m
        for v, got, exp in zip(shown.names, values, expected.values, strict=True)
        if (m := mismatch(f"value of {v}", got, exp, tol))
    ]
    wrong_grads = [
        m
        for label, got, exp in zip(shown.gradients, grads, expected.grads, strict=False)
        if (m := mismatch(label, got, exp, tol))
    ]
    if (wrong_values or wrong_grads) and not session.oracles.confirmed(graph, None, expected):
        return

    def draw() -> dict:
        return graph_figure(graph, expected.values, values, expected.grads, grads, tol)

    note = [NOTES[probe]] if NOTES[probe] else []
    if wrong_values:
        raise WrongAnswer(
            "failed", "wrong forward value", [*wrong_values[:4], *note], shown.source, draw=draw
        )
    if wrong_grads:
        # The graph diagnoses name micrograd's and babygrad's mistakes in their own words
        # (closures, a grads ledger): a course whose ops are classes gets none rather than
        # a wrong one.
        named = not note and not own.functions
        found = bugs.diagnose_graph(graph, grads[: len(graph.leaves)], tol) if named else []
        raise WrongAnswer(
            "failed", "wrong gradient", [*wrong_grads[:4], *note], shown.source, found, draw
        )
