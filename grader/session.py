"""A grading session: one submission, one worker, the oracles, and the checks tests call.

The checks are the only place where answers meet expectations. A check that finds the student
wrong raises ``GradeFailure`` (Hypothesis then shrinks the input). When the worker times out,
crashes, or a function is missing, the check instead records that on the running test and
raises ``Aborted``, a skip exception that Hypothesis re-raises at once without shrinking:
re-running a hang on every shrink step would be ruinous, and a missing function needs no
smaller example. The plugin turns the record into the test's failure.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader import bugs
from grader.figures import dag_figure, graph_figure
from grader.given import Dag, diamonds
from grader.graphs import Graph, evaluate, names
from grader.judge import GradeFailure, Tolerance, mismatch, show
from grader.oracles import Evaluation, OracleUnavailable, numeric, torch_oracle
from grader.oracles.reference import ReferenceOracle
from grader.snippets import (
    accumulate_snippet,
    broadcast_snippet,
    chain_snippet,
    dag_snippet,
    diamond_snippet,
    graph_snippet,
    op_snippet,
    tensor_dag_snippet,
)
from grader.worker import protocol
from grader.worker.launch import Limits, Worker, WorkerFailure, worker_in_free_slot

ASSIGNMENT_OF_KIND = {"scalar": "micrograd", "tensor": "babygrad"}
AGREEMENT = Tolerance(atol=1e-6, rtol=1e-5)
IMPORT_BUDGET_FACTOR = 2
"""Importing a submission may take this many request budgets of CPU time (some engines run a
training loop at module level)."""
TEST_BUDGET_FACTOR = 6
"""A grading test may use this many request budgets of CPU time in all: slow examples cannot
make Hypothesis search, and above all shrink, for minutes."""
TEST_WALL_FACTOR = 4
"""...and this many times that of wall-clock time, a backstop for a starved machine."""
NOTES = {
    "graph": "",
    "routing": ("(graded with the grader's own forward and backward in every ops class and the "
                "grader's own walk, so only which ops the operators and methods reach counts "
                "here)"),
    "sugar": ("(graded with the grader's own +, *, **, tanh, exp, relu and the grader's own "
              "walk, so only how the other operators are built from them counts here)"),
}
"""What each way of building and walking a graph leaves to the student, said on failure."""
EXPONENTIAL = "visits shared nodes again: exponential time"


class Aborted(pytest.skip.Exception):
    """Stops the running property at once; the plugin reports the recorded ``Abort``."""


@dataclass
class Abort:
    """Why a test stopped asking the worker: it scores as this status with this reason."""

    status: str
    reason: str
    failure: GradeFailure | None = None
    """The verdict to report instead, when the test had already failed (shrinking stopped)."""


def _recorded(check: Callable[..., None]) -> Callable[..., None]:
    """Remember a check's latest verdict on the running test (during shrinking, the smallest
    example so far), for the test to report if its time runs out."""

    @functools.wraps(check)
    def recording(self: GradingSession, *args: Any, **kwargs: Any) -> None:
        try:
            check(self, *args, **kwargs)
        except GradeFailure as failure:
            self.failures[self.current_test] = failure
            raise

    return recording


class Oracles:
    """The available oracles. The first gives the expected answer; before any verdict against
    a student, the second must confirm it. A correct engine never needs the second, so a
    passing grade does not even import torch."""

    def __init__(self, reference_dir: Path | None, use_torch: bool = True) -> None:
        self.chain: list[Any] = []
        if reference_dir is not None:
            with contextlib.suppress(OracleUnavailable):
                self.chain.append(ReferenceOracle(reference_dir))
        if use_torch and torch_oracle.available():
            self.chain.append(torch_oracle)
        if len(self.chain) < 2:
            self.chain.append(numeric)
        self.disagreements = 0

    @property
    def names(self) -> list[str]:
        return [oracle.name for oracle in self.chain]

    def expected(self, graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
        return self.chain[0].evaluate_graph(graph, out_grad)

    def tolerance(self, rubric: Tolerance) -> Tolerance:
        """The rubric's bound, widened to finite differences' own error when they are the
        only reference point (no reference, no torch): never a false fail from an oracle."""
        if self.chain[0] is not numeric:
            return rubric
        return Tolerance(max(rubric.atol, numeric.TOLERANCE.atol),
                         max(rubric.rtol, numeric.TOLERANCE.rtol))

    def confirmed(self, graph: Graph, out_grad: np.ndarray | None, first: Evaluation) -> bool:
        """Does the second oracle agree with the first? If not the example says nothing
        about the student (a grader problem): it is skipped rather than risk a false fail."""
        if len(self.chain) < 2:
            return True
        second = self.chain[1]
        answer = second.evaluate_graph(graph, out_grad)
        pairs = [*zip(first.values, answer.values, strict=True),
                 *zip(first.grads, answer.grads, strict=True)]
        bound = numeric.TOLERANCE if second is numeric else AGREEMENT
        if all(bound.close(a, b) for a, b in pairs):
            return True
        self.disagreements += 1
        return False


@dataclass
class GradingSession:
    """Everything one grading run of one submission needs."""

    submission: Path
    tolerances: dict[str, Tolerance]
    reference_dir: Path | None = None
    use_torch: bool = True
    """PyTorch may be an oracle when installed (off: grade as a student release without it)."""
    sandbox: str = "auto"
    slot: int = 0
    limits: Limits = field(default_factory=Limits)
    budgets: dict[str, float] = field(default_factory=dict)
    current_item: str = ""
    current_test: str = ""
    aborts: dict[str, Abort] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.oracles = Oracles(self.reference_dir, self.use_torch)
        self._worker: Worker | None = None
        self._next_id = 0
        self.checks = 0
        self.failures: dict[str, GradeFailure] = {}
        self.import_failures: dict[str, tuple[str, str]] = {}
        self._imported: set[str] = set()
        self._test_started: dict[str, tuple[float, float, float]] = {}

    @property
    def worker(self) -> Worker:
        if self._worker is None:
            package = Path(__file__).resolve().parent
            hidden = [package / "suites", package / "oracles"]
            torch_dir = torch_oracle.location()
            if torch_dir is not None:
                hidden.append(torch_dir)
            if self.reference_dir is not None:
                hidden.append(self.reference_dir.resolve())
            self._worker = worker_in_free_slot(
                [sys.executable, "-I", "-m", "grader.worker.runner"], first_slot=self.slot,
                submission=self.submission, readable=[Path(sys.prefix), package],
                hidden=hidden, limits=self.limits, sandbox=self.sandbox)
        return self._worker

    @property
    def protections(self) -> list[str]:
        return list(self._worker.protections) if self._worker is not None else []

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()

    # -- talking to the worker ------------------------------------------------------------

    def ask(self, assignment: str, probe: str, case: dict[str, Any],
            snippet: Callable[[], str], on_timeout: GradeFailure | None = None
            ) -> dict[str, Any]:
        """One probe on the student's engine: the validated ok-result. A Python exception from
        the student's code is a ``GradeFailure``; a hang, a crash or a missing function is
        recorded and raises ``Aborted``, except a timeout where the check says what running
        out of time means (``on_timeout``)."""
        budget = self.budgets.get(self.current_item, 5.0)
        self._check_test_time(budget * TEST_BUDGET_FACTOR)
        self._import(assignment, budget * IMPORT_BUDGET_FACTOR)
        result = self._request(assignment, probe, case, budget, on_timeout)
        self.checks += 1
        if "ok" in result:
            return result["ok"]
        error = result["error"]
        if error["status"] == "missing":
            self._abort("missing", error["message"])
        raise GradeFailure("error", error["message"], [f"  at {f}" for f in error["frames"]],
                           snippet())

    def _request(self, assignment: str, probe: str, case: dict[str, Any], budget: float,
                 on_timeout: GradeFailure | None = None) -> dict[str, Any]:
        """One validated result; a dead, hung or garbling worker aborts the running test."""
        self._next_id += 1
        message = protocol.request(self._next_id, assignment, probe, [case])
        try:
            (result,) = protocol.results(self.worker.request(message, budget), message)
        except WorkerFailure as failure:
            if failure.kind == "timeout" and on_timeout is not None:
                raise on_timeout from None
            self._abort("timeout" if failure.kind == "timeout" else "error", failure.detail)
        except protocol.InvalidAnswer as exc:
            self._abort("error", f"invalid answer: {exc}")
        return result

    def _import(self, assignment: str, budget: float) -> None:
        """Import the submission in a (fresh) worker before probing it, with its own budget.

        A submission that cannot be imported (syntax error, exception, hang or crash at import)
        fails every item of the assignment at once with that reason: no shrinking and no
        timeout per item. A slow import (a training loop at module level) is not charged to
        the first probe."""
        if assignment in self.import_failures:
            self._abort(*self.import_failures[assignment])
        if not self.worker.running:
            self._imported.clear()
        if assignment in self._imported:
            return
        try:
            result = self._request(assignment, "load", {}, budget)
        except Aborted:
            abort = self.aborts[self.current_test]
            self.import_failures[assignment] = (abort.status, f"while importing: {abort.reason}")
            self.aborts[self.current_test] = Abort(*self.import_failures[assignment])
            raise
        if "error" in result:
            error = result["error"]
            where = f" (at {error['frames'][-1]})" if error["frames"] else ""
            self.import_failures[assignment] = (
                "missing" if error["status"] == "missing" else "error",
                f"{error['message']}{where}")
            self._abort(*self.import_failures[assignment])
        self._imported.add(assignment)

    def _abort(self, status: str, reason: str, failure: GradeFailure | None = None) -> None:
        self.aborts[self.current_test] = Abort(status, reason, failure)
        raise Aborted(reason)

    def _check_test_time(self, limit: float) -> None:
        """Stop the running test once it has used ``limit`` seconds of CPU time (the grader's
        and the worker's), or ``TEST_WALL_FACTOR`` times that of wall time: with its latest
        failure (the search for a smaller example ends there), else as a timeout. CPU time is
        read only once the wall clock passes the limit, and machine load does not move it."""
        now = time.monotonic()
        if self.current_test not in self._test_started:
            self._test_started[self.current_test] = (now, time.process_time(),
                                                     self.worker.cpu_seconds())
        wall, cpu, worker_cpu = self._test_started[self.current_test]
        if now - wall <= limit:
            return
        used = time.process_time() - cpu + max(0.0, self.worker.cpu_seconds() - worker_cpu)
        if used <= limit and now - wall <= limit * TEST_WALL_FACTOR:
            return
        failure = self.failures.get(self.current_test)
        if failure is not None:
            failure.details = [*failure.details, f"(examples were slow: the search for a "
                                                 f"smaller one stopped after {limit:g} s)"]
            self._abort(failure.status, failure.reason, failure)
        self._abort("timeout", f"its examples took more than {limit:g} s in all (each request "
                               "was within its own time limit)")

    def arrays(self, answer: dict[str, Any], key: str, labels: list[str],
               shapes: list[tuple[int, ...]]) -> list[np.ndarray | None]:
        """Decode a list of arrays from an answer; a missing gradient decodes to None."""
        items = protocol.field(answer, key, list)
        if len(items) != len(labels):
            raise protocol.InvalidAnswer(f"{len(items)} {key} for {len(labels)} nodes")
        return [None if item is None else protocol.decode_array(item, label)
                for item, label, _ in zip(items, labels, shapes, strict=True)]

    def _decoded(self, answer: dict[str, Any], key: str, labels: list[str],
                 shapes: list[tuple[int, ...]], snippet: str) -> list[np.ndarray | None]:
        try:
            return self.arrays(answer, key, labels, shapes)
        except protocol.InvalidAnswer as exc:
            raise GradeFailure("error", f"invalid answer: {exc}", [], snippet) from None

    # -- checks ---------------------------------------------------------------------------

    @_recorded
    def check_graph(self, graph: Graph, probe: str = "graph") -> None:
        """A graph built with operators and methods, its gradients compared with the oracles.

        ``probe`` says what is the student's: ``graph`` everything (their ops and their
        ``backward()``); ``routing`` (babygrad) only which ops operators and methods reach, on
        the grader's ops and walk; ``sugar`` (micrograd) only how operators are composed from
        the primitives, on the grader's primitives and walk."""
        expected = self.oracles.expected(graph)
        assignment = ASSIGNMENT_OF_KIND[graph.kind]
        walk = probe == "sugar"
        snippet = graph_snippet(graph, walk=walk)
        answer = self.ask(assignment, probe, {"graph": graph.to_json()}, lambda: snippet)
        var = names(graph)
        values = self._decoded(answer, "values", [f"value of {v}" for v in var],
                               [v.shape for v in expected.values], snippet)
        grads = self._decoded(answer, "grads", [f"{v}.grad" for v in var],
                              [v.shape for v in expected.values], snippet)
        tol = self.oracles.tolerance(self.tolerances[assignment])
        wrong_values = [m for v, got, exp in zip(var, values, expected.values, strict=True)
                        if (m := mismatch(f"value of {v}", got, exp, tol))]
        wrong_grads = [m for v, got, exp in zip(var, grads, expected.grads, strict=False)
                       if (m := mismatch(f"{v}.grad", got, exp, tol))]
        if (wrong_values or wrong_grads) and not self.oracles.confirmed(graph, None, expected):
            return
        figure = graph_figure(graph, expected.values, values, expected.grads, grads, tol)
        note = [NOTES[probe]] if NOTES[probe] else []
        if wrong_values:
            raise GradeFailure("failed", "wrong forward value", [*wrong_values[:4], *note],
                               snippet, figure=figure)
        if wrong_grads:
            found = [] if note else bugs.diagnose_graph(graph, grads[: len(graph.leaves)], tol)
            raise GradeFailure("failed", "wrong gradient", [*wrong_grads[:4], *note], snippet,
                               found, figure)

    @_recorded
    def check_op(self, graph: Graph, out_grad: np.ndarray) -> None:
        """One op alone: its forward value, then its own backward for ``out_grad``."""
        expected = self.oracles.expected(graph, out_grad)
        assignment = ASSIGNMENT_OF_KIND[graph.kind]
        snippet = op_snippet(graph, out_grad)
        try:
            answer = self.ask(assignment, "op", {"graph": graph.to_json(),
                                                 "out_grad": out_grad.tolist()}, lambda: snippet)
        except GradeFailure as failure:  # their code raised: a classic bug may raise just so
            failure.bugs = bugs.diagnose_op_error(graph, out_grad, failure.reason,
                                                  failure.details)
            raise
        var = names(graph)[: len(graph.leaves)]
        (value,) = self._decoded(answer, "values", ["out.data"], [expected.values[-1].shape],
                                 snippet)
        grads = self._decoded(answer, "grads", [f"gradient for {v}" for v in var],
                              [g.shape for g in expected.grads], snippet)
        tol = self.oracles.tolerance(self.tolerances[assignment])
        wrong = mismatch("forward: out.data", value, expected.values[-1], tol)
        wrong_grads = [m for v, got, exp in zip(var, grads, expected.grads, strict=True)
                       if (m := mismatch(f"backward: gradient for {v}", got, exp, tol))]
        if (wrong or wrong_grads) and not self.oracles.confirmed(graph, out_grad, expected):
            return
        figure = graph_figure(graph, expected.values, [*graph.leaves, value],
                              [*expected.grads, out_grad], [*grads, out_grad], tol)
        if wrong:
            raise GradeFailure("failed", "wrong forward value", [wrong], snippet, figure=figure)
        if wrong_grads:
            found = bugs.diagnose_op(graph, out_grad, grads, tol)
            raise GradeFailure("failed", "wrong gradient in backward", wrong_grads, snippet,
                               found, figure)

    @_recorded
    def check_topo(self, dag: Dag, on_timeout: GradeFailure | None = None) -> None:
        snippet = dag_snippet(dag, "print(build_topo({root}))")
        answer = self.ask("micrograd", "topo", {"dag": dag.to_json()}, lambda: snippet,
                          on_timeout)
        order = protocol.field(answer, "order", list)
        if not all(type(i) is int for i in order):
            raise GradeFailure("error", "invalid answer: build_topo returned non-nodes", [],
                               snippet)
        problems = dag.topo_problems(order)
        if problems:
            found = bugs.diagnose_topo(dag, order)
            raise GradeFailure("failed", "build_topo returned an invalid order",
                               [f"order (as node numbers): {order}", *problems], snippet, found)

    @_recorded
    def check_backward(self, dag: Dag, passes: int = 1) -> None:
        """``backward()`` over grader closures (and a correct ``build_topo``)."""
        calls = "\n".join(["{root}.backward()"] * passes)
        snippet = dag_snippet(dag, calls + "\nprint([n.grad for n in build_topo({root})])")
        answer = self.ask("micrograd", "backward", {"dag": dag.to_json(), "passes": passes},
                          lambda: snippet)
        results = protocol.field(answer, "passes", list)
        if len(results) != passes or not all(isinstance(r, dict) for r in results):
            raise GradeFailure("error", "invalid answer from backward()", [], snippet)
        expected = dag.backward(passes)
        tol = self.tolerances["micrograd"]
        live = dag.reachable()
        for number, (result, want) in enumerate(zip(results, expected, strict=True), 1):
            label = f"after backward() call {number}: " if passes > 1 else ""
            grads = self._decoded(result, "grads", [f"n{i}.grad" for i in range(dag.size)],
                                  [()] * dag.size, snippet)
            calls_made = protocol.field(result, "calls", list)
            twice = [i for i, c in enumerate(calls_made)
                     if i in live and i >= dag.leaves and c != number]
            if twice:
                found = bugs.diagnose_calls(calls_made, number)
                raise GradeFailure("failed", "a node's _backward ran the wrong number of times",
                                   [f"{label}node(s) {twice} ran {[calls_made[i] for i in twice]}"
                                    f" times, expected {number}"], snippet, found)
            wrong = [m for i, (got, exp) in enumerate(zip(grads, want, strict=True))
                     if (m := mismatch(f"{label}n{i}.grad", got, np.float64(exp), tol))]
            if wrong:
                found = bugs.diagnose_backward(dag, grads, number)
                raise GradeFailure("failed", "wrong gradients after backward()", wrong[:4],
                                   snippet, found, dag_figure(dag, want, grads, tol))

    @_recorded
    def check_zero_grad(self, dag: Dag) -> None:
        snippet = dag_snippet(dag, "for n in build_topo({root}):\n    n.grad = 1.0\n"
                                   "zero_grad({root})\nprint([n.grad for n in build_topo({root})])")
        answer = self.ask("micrograd", "zero_grad", {"dag": dag.to_json()}, lambda: snippet)
        grads = self._decoded(answer, "grads", [f"n{i}.grad" for i in range(dag.size)],
                              [()] * dag.size, snippet)
        live = dag.reachable()
        left = [f"n{i}.grad is {float(g)}" for i, g in enumerate(grads)
                if i in live and (g is None or float(g) != 0.0)]
        if left:
            raise GradeFailure("failed", "zero_grad left gradients behind", left[:4], snippet)

    @_recorded
    def check_deep(self, length: int) -> None:
        """``build_topo`` over a chain of ``length`` grader nodes returns each node once (in
        any order: whether the order is valid is ``micrograd.topo``'s question)."""
        snippet = chain_snippet(length)
        answer = self.ask("micrograd", "deep", {"length": length}, lambda: snippet)
        order = protocol.field(answer, "order", list)
        if sorted(i for i in order if type(i) is int) != list(range(length + 1)):
            raise GradeFailure("failed", "build_topo lost nodes of a long chain",
                               [f"it returned {len(order)} entries for the {length + 1:,} "
                                "nodes of the chain"], snippet)

    @_recorded
    def check_walk_cost(self, assignment: str, depth: int) -> None:
        """The walk of ``assignment`` over a chain of ``depth`` diamonds finishes within the
        item's CPU budget, which a walk that revisits shared nodes (2**depth visits) does not.
        micrograd's order is also checked (that is ``micrograd.topo``'s subject); babygrad's
        gradients are not: summing them on shared tensors is ``babygrad.accumulate``'s."""
        dag = diamonds(depth)
        budget = self.budgets.get(self.current_item, 5.0)
        failure = GradeFailure(
            "failed", f"{'build_topo' if assignment == 'micrograd' else 'Tensor.backward'} "
            f"{EXPONENTIAL}",
            [f"it did not finish on a chain of {depth} diamonds ({dag.size} nodes) within "
             f"{budget:g} s of CPU time: each shared node was walked again from every path to "
             "it, 2 ** depth times", "Each level added to `depth` below doubles the time."],
            diamond_snippet(assignment), [bugs.BUGS["revisits-shared-nodes"].describe()])
        if assignment == "micrograd":
            self.check_topo(dag, on_timeout=failure)
        else:
            self._tensor_backward(dag, (1,), tensor_dag_snippet(dag, (1,)), on_timeout=failure)

    def _tensor_backward(self, dag: Dag, shape: tuple[int, ...], snippet: str,
                         on_timeout: GradeFailure | None = None) -> list[np.ndarray | None]:
        """Every node's gradient after the student's ``Tensor.backward`` on grader-made ops."""
        answer = self.ask("babygrad", "tensor_backward",
                          {"dag": dag.to_json(), "shape": list(shape)}, lambda: snippet,
                          on_timeout)
        return self._decoded(answer, "grads", [f"n{i}.grad" for i in range(dag.size)],
                             [shape] * dag.size, snippet)

    @_recorded
    def check_tensor_backward(self, dag: Dag, shape: tuple[int, ...]) -> None:
        """``Tensor.backward`` over grader-made weighted-sum ops: the walk and the ledger."""
        snippet = tensor_dag_snippet(dag, shape)
        grads = self._tensor_backward(dag, shape, snippet)
        (want,) = dag.backward(1)
        tol = self.tolerances["babygrad"]
        live = dag.reachable()
        wrong = [m for i, got in enumerate(grads)
                 if i in live and (m := mismatch(f"n{i}.grad", got, np.full(shape, want[i]), tol))]
        if wrong:
            found = bugs.diagnose_tensor_backward(dag, grads)
            expected = [np.full(shape, w) for w in want]
            raise GradeFailure("failed", "wrong gradients from Tensor.backward()", wrong[:4],
                               snippet, found, dag_figure(dag, expected, grads, tol))


    @_recorded
    def check_accumulate(self, graph: Graph, out_grad: float, preload: list[float]) -> None:
        """Every ``_backward`` adds into its operands' gradients: with each leaf's gradient
        preloaded, a leaf must end at its preload plus what its uses contribute when taken
        apart (``probe_accumulate``). The engine's own derivatives are on both sides, so a
        wrong derivative costs its op item, never this one."""
        snippet = accumulate_snippet(graph, out_grad, preload)
        answer = self.ask("micrograd", "accumulate", {"graph": graph.to_json(),
                                                      "out_grad": out_grad, "preload": preload},
                          lambda: snippet)
        var = names(graph)[: len(graph.leaves)]
        separate = self._decoded(answer, "separate", var, [()] * len(var), snippet)
        preloaded = self._decoded(answer, "preloaded", var, [()] * len(var), snippet)
        tol = self.tolerances["micrograd"]
        wrong = [m for v, p, s, got in zip(var, preload, separate, preloaded, strict=True)
                 if (m := mismatch(f"{v}.grad (held {p:g} before; its uses add "
                                   f"{float(s):.6g})", got, np.float64(p + float(s)), tol))]
        if wrong:
            ops = sorted({node.op for node in graph.nodes} - {"add"} or {"add"})
            values = evaluate(graph)
            want = [np.float64(p + float(s)) for p, s in zip(preload, separate, strict=True)]
            raise GradeFailure("failed", f"{', '.join(ops)}: a _backward overwrote a gradient",
                               wrong[:4], snippet, [bugs.BUGS["overwrite-grad"].describe()],
                               graph_figure(graph, values, values, want, preloaded, tol))

    @_recorded
    def check_broadcast(self, graph: Graph, out_grad: np.ndarray) -> None:
        """An elementwise op on operands numpy broadcasts implicitly: each gradient must be the
        op's own gradient for the operands broadcast beforehand, summed back to the operand's
        shape. Only that reduction is judged; the op's formulas are its own item's."""
        snippet = broadcast_snippet(graph, out_grad)
        answer = self.ask("babygrad", "broadcast", {"graph": graph.to_json(),
                                                    "out_grad": out_grad.tolist()},
                          lambda: snippet)
        shape = out_grad.shape
        leaves = [v.shape for v in graph.leaves]
        runs = {}
        for run, shapes in (("implicit", leaves), ("explicit", [shape] * len(leaves))):
            part = protocol.field(answer, run, dict)
            runs[run] = (*self._decoded({"v": [part.get("value")]}, "v", ["out.data"], [shape],
                                        snippet),
                         self._decoded(part, "grads", [f"gradient {i}" for i in range(2)],
                                       shapes, snippet))
        tol = self.tolerances["babygrad"]
        (value, grads), (full_value, full_grads) = runs["implicit"], runs["explicit"]
        var = names(graph)[: len(leaves)]
        wrong = [m for m in [mismatch("out.data", value, full_value, tol)] if m] if (
            full_value is not None) else []
        wrong += [m for v, got, full, leaf in zip(var, grads, full_grads, leaves, strict=True)
                  if full is not None
                  and (m := mismatch(f"gradient for {v} (shape {leaf})", got,
                                     reduce_to(full, leaf), tol))]
        if wrong:
            found = [bugs.BUGS["broadcast-no-sum"].describe()] if any(
                g is not None and g.shape == shape != leaf
                for g, leaf in zip(grads, leaves, strict=True)) else []
            raise GradeFailure("failed", "broadcast gradients not summed back", wrong[:4],
                               snippet, found)

    @_recorded
    def check_ledger(self, dag: Dag, shape: tuple[int, ...]) -> None:
        """``Tensor.backward``'s ledger sums: on grader-made ops, each node's gradient on a DAG
        must be the sum of its copies' gradients on the same DAG unrolled into a tree, both from
        the student's own ``Tensor.backward``. A walk that is wrong on trees is wrong the same
        way on both (``babygrad.backward`` grades it); only losing a contribution differs."""
        tree, owners = dag.unrolled()
        snippet = tensor_dag_snippet(dag, shape)
        shared = self._tensor_backward(dag, shape, snippet)
        apart = self._tensor_backward(tree, shape, tensor_dag_snippet(tree, shape))
        tol = self.tolerances["babygrad"]
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
            raise GradeFailure("failed", "Tensor.backward lost a contribution to a shared tensor",
                               wrong[:4], snippet, [bugs.BUGS["overwrite-grad"].describe()])


def reduce_to(full: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A gradient for a broadcast operand summed back to the operand's ``shape``: over the axes
    broadcasting prepended, then over the axes it stretched from size 1."""
    total = full.sum(axis=tuple(range(full.ndim - len(shape))))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and total.shape[i] != 1)
    return total.sum(axis=stretched, keepdims=True).reshape(shape)
