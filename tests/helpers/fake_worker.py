"""A fake worker for the checks' tests: the sandboxed worker's part, in the test process.

``FakeWorker`` answers each request as ``grader/worker/runner.py`` does, by running the probe on
the reference engine in this process; a test may change the plain numbers before the session
sees them (``tamper``), answer an error, or time out. Shared by
``tests/checks/test_checks_fake_worker.py`` (this course's checks),
``tests/checks/test_variables_fake_worker.py`` (MiniTorch's) and others, with the small graphs
they ask about."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from grader.checks.session import GradingSession
from grader.grading import rubric as rubric_module
from grader.language import profiles
from grader.language.dags import Dag
from grader.language.graphs import Graph, Node
from grader.language.verdicts import WrongAnswer
from grader.layout import DEFAULT_RUBRIC
from grader.sandbox.launch import WorkerFailure
from grader.worker import encoding, probes
from grader.worker.engines import load_engine
from tests.helpers.planted import REFERENCE

RUBRIC = rubric_module.load(DEFAULT_RUBRIC)
TEST = "tests/fake::test_check"
"""The running grading test, as the plugin would name it to the session."""

Answer = dict[str, Any]
Tamper = Callable[[dict[str, Any], Answer], Answer]
"""``(case, answer) -> answer``: the reference's answer to a probe, changed (or an error)."""


@functools.cache
def engine(assignment: str) -> Any:
    return load_engine(REFERENCE, assignment)


def encode(value: Any) -> dict[str, Any]:
    """A number or array as the worker sends it."""
    return encoding.encode(np.asarray(value, dtype=np.float64), "value")


def decode(answer: dict[str, Any]) -> np.ndarray:
    return np.asarray(answer["data"], dtype=np.float64).reshape(answer["shape"])


def error(message: str, *frames: str, status: str = "error") -> Answer:
    """The worker's report of an exception raised by the engine."""
    return {"error": {"status": status, "message": message, "frames": list(frames)}}


class FakeWorker:
    """The sandboxed worker's part, in this process: each probe of ``grader.worker.probes``
    runs on the reference engine, its answer crosses as JSON, and ``tamper[probe]`` may change
    it. A probe in ``timeout`` times out as a worker over its budget does."""

    running = True
    protections: list[str] = []

    def __init__(
        self, tamper: dict[str, Tamper] | None = None, timeout: tuple[str, ...] = ()
    ) -> None:
        self.tamper = tamper or {}
        self.timeout = timeout
        self.asked: list[str] = []

    def cpu_seconds(self) -> float:
        return 0.0

    def engine(self, assignment: str) -> Any:
        """The engine the probes run on: the reference's (another course's, in a subclass)."""
        return engine(assignment)

    def close(self) -> None:
        pass

    def request(self, message: dict[str, Any], budget: float) -> dict[str, Any]:
        message = json.loads(json.dumps(message))  # only plain data crosses
        probe = message["probe"]
        self.asked.append(probe)
        if probe in self.timeout:
            raise WorkerFailure("timeout", f"timed out after {budget:g} s of CPU time")
        results = []
        for case in message["cases"]:
            answer = json.loads(
                json.dumps(probes.PROBES[probe](self.engine(message["assignment"]), case))
            )
            if probe in self.tamper:
                answer = self.tamper[probe](case, answer)
            results.append(answer if set(answer) == {"error"} else {"ok": answer})
        return {"id": message["id"], "results": results}


def session(
    item: str,
    tamper: dict[str, Tamper] | None = None,
    timeout: tuple[str, ...] = (),
    worker: type[FakeWorker] = FakeWorker,
    profile: profiles.Profile | None = None,
) -> GradingSession:
    """A grading session on the reference (oracles: the reference, confirmed by finite
    differences) whose worker is a ``FakeWorker`` (or ``worker``), running a test of
    ``item``; of ``profile``'s course and its reference, when given."""
    reference = REFERENCE if profile is None else profile.path.parent / "reference"
    grading = GradingSession(
        submission=reference,
        tolerances=RUBRIC.tolerances,
        reference_dir=reference,
        use_torch=False,
        profile=profile or profiles.course(),
        launch=lambda _: worker(tamper, timeout),  # type: ignore[return-value]
        budgets={i.id: i.timeout for i in RUBRIC.items},
    )
    grading.current_item, grading.current_test = item, TEST
    return grading


def asked(grading: GradingSession) -> list[str]:
    return grading._worker.asked  # type: ignore[union-attr]


def set_entry(key: str, index: int, value: Any) -> Tamper:
    """Replace entry ``index`` of the answer's list ``key`` with ``value`` (encoded)."""

    def change(case: dict[str, Any], answer: Answer) -> Answer:
        answer[key][index] = encode(value)
        return answer

    return change


def wrote(phase: str, target: int, during: int | None, before: float, after: float) -> Tamper:
    """The answer reporting that the call changed node ``target`` in ``phase`` (while node
    ``during``'s op ran; None: a whole walk) from ``before`` to ``after``."""

    def change(case: dict[str, Any], answer: Answer) -> Answer:
        entry = {"phase": phase, "target": target, "during": during}
        return answer | {"mutated": [entry | {"before": encode(before), "after": encode(after)}]}

    return change


def wrong(check: Callable[..., None], grading: GradingSession, *args: Any) -> WrongAnswer:
    """The verdict ``check`` gives; it is also recorded on the running test."""
    with pytest.raises(WrongAnswer) as raised:
        check(grading, *args)
    assert grading.failures[TEST] is raised.value
    return raised.value


def names_bug(verdict: WrongAnswer, bug: str) -> bool:
    return any(found.startswith(f"{bug}: ") for found in verdict.bugs)


# ------------------------------------------------------- graphs the checks' tests share

# a = 1.5, b = -2.0, c = a * b, d = c + a, e = tanh(d)
SCALAR = Graph(
    "scalar", (1.5, -2.0), (Node("mul", (0, 1)), Node("add", (2, 0)), Node("tanh", (3,)))
)
SQUARE = Graph("scalar", (3.0,), (Node("mul", (0, 0)),))  # b = a * a: a.grad is 6
TENSOR = Graph(
    "tensor",
    (np.arange(6.0).reshape(2, 3) / 4 - 0.5, np.array([0.5, -1.0, 2.0])),
    (Node("mul", (0, 1)), Node("tanh", (2,))),
)
SUGAR = Graph("scalar", (1.5, -2.0), (Node("sub", (0, 1)), Node("rdiv", (2,), 2.0)))
ROUTING = Graph(
    "tensor",
    (np.array([1.0, 2.0]), np.array([0.5, 3.0])),
    (Node("sub", (0, 1)), Node("rsub", (2,), 2.0)),
)
TANH = Graph("scalar", (0.5,), (Node("tanh", (0,)),))

# n0, n1 leaves; n2 = 2 n0 - n1; n3 = 0.5 n2 + 3 n0 (n0 shared). Gradients: 4, -0.5, 0.5, 1.
DAG = Dag(2, (((0, 2.0), (1, -1.0)), ((2, 0.5), (0, 3.0))))
# n0, n1 leaves; n2 = 2 n0 - n1: a tree. Gradients: 2, -1, 1.
TREE = Dag(2, (((0, 2.0), (1, -1.0)),))
UPSTREAM = np.array([0.5, -1.5])


def on_run(run: str, tamper: Tamper) -> Tamper:
    """``tamper`` applied to the accumulate probe's answers for one ``run`` only."""
    return lambda case, answer: tamper(case, answer) if case["run"] == run else answer
