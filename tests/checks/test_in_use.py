"""Engines in use, not only fresh: the walk and ledger checks on graphs that already hold
gradients (a second ``backward()`` from an inner node, a root whose grad is not 0,
``zero_grad`` from a new root over a trained graph) and on ops that hand ``out_grad`` back
unchanged. The reference passes them; each planted mistake they exist for fails its own
check, with a snippet that, run as a student runs it, prints what the verdict says."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.checks import accumulation, walks
from grader.language.dags import HANDED_BACK_LEDGERS, IN_USE_BACKWARDS, TRAINED_ZERO_GRADS
from grader.language.verdicts import WrongAnswer
from grader.worker.engines import load_engine
from tests.helpers.fake_worker import FakeWorker, encode, session, wrong
from tests.helpers.planted import CATALOGUE, REFERENCE, plant

SEEDS_ONLY_AT_ZERO = CATALOGUE["micrograd.backward:seeds-only-at-zero"]
STOPS_AT_ZERO = CATALOGUE["micrograd.zero_grad:stops-at-zero"]
SUMS_IN_PLACE = CATALOGUE["babygrad.accumulate:sums-in-place"]


PLANTED_ROOT = tempfile.TemporaryDirectory(prefix="in-use-")  # removed when the process ends


@functools.cache
def planted(label: str) -> Path:
    """The reference with ``label``'s bug, planted once per test process."""
    return plant(Path(tempfile.mkdtemp(dir=PLANTED_ROOT.name)), CATALOGUE[label])


def worker_on(label: str) -> type[FakeWorker]:
    """A ``FakeWorker`` whose probes run on the reference with ``label``'s bug."""

    class Planted(FakeWorker):
        def engine(self, assignment: str) -> Any:
            return _engine(label, assignment)

    return Planted


@functools.cache
def _engine(label: str, assignment: str) -> Any:
    return load_engine(planted(label), assignment)


def printed(snippet: str, root: Path) -> list[Any]:
    """What each ``print`` of ``snippet`` printed (numpy arrays as nested lists), run as a
    student would beside the engine at ``root``."""
    done = subprocess.run(
        [sys.executable, "-c", snippet], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    names = {"array": lambda a, dtype=None: np.asarray(a).tolist(), "float32": None}
    outputs = re.split(r"\n(?=\[)", done.stdout.strip())
    return [eval(output, names) for output in outputs]  # noqa: S307 - our own snippet's output


def test_the_reference_passes_every_graph_in_use():
    grading = session("micrograd.backward")
    for dag, roots, held in IN_USE_BACKWARDS:
        walks.check_backward(grading, dag, roots=roots, held=held)
    grading = session("micrograd.zero_grad")
    for dag, held in TRAINED_ZERO_GRADS:
        walks.check_zero_grad(grading, dag, held=held)
    grading = session("babygrad.accumulate")
    for dag in HANDED_BACK_LEDGERS:
        accumulation.check_ledger(grading, dag, (2, 3), hands_back=True)


@pytest.mark.parametrize("case", IN_USE_BACKWARDS, ids=["from-an-inner-node", "held-root"])
def test_a_backward_that_seeds_only_a_zero_grad_fails(case):
    dag, roots, held = case
    grading = session("micrograd.backward", worker=worker_on(SEEDS_ONLY_AT_ZERO.label))
    verdict = wrong(partial(walks.check_backward, roots=roots, held=held), grading, dag)
    assert verdict.reason == "wrong gradients after backward()"
    assert verdict.details[-1] == walks.SEEDED
    if roots == (3, 2):  # y = 2a + 3b, z = 0.5y + a; z.backward(); y.backward()
        assert verdict.details[:2] == [
            "after n2.backward() call 2: n0.grad: expected 4, got 3",
            "after n2.backward() call 2: n1.grad: expected 4.5, got 3",
        ]
    # the snippet prints the reference's expected grads, and the planted engine's wrong ones
    want = dag.backward_from(list(roots), held)
    assert printed(verdict.snippet, REFERENCE) == want
    assert printed(verdict.snippet, planted(SEEDS_ONLY_AT_ZERO.label)) != want


def test_backward_in_use_writes_each_order_the_grader_gives():
    dag, roots, held = IN_USE_BACKWARDS[0]
    grading = session("micrograd.backward", worker=worker_on(SEEDS_ONLY_AT_ZERO.label))
    snippet = wrong(partial(walks.check_backward, roots=roots, held=held), grading, dag).snippet
    assert "micrograd.engine.build_topo = lambda root: [n0, n1, n2, n3]" in snippet
    assert "micrograd.engine.build_topo = lambda root: [n0, n1, n2]" in snippet
    assert snippet.index("[n0, n1, n2]") > snippet.index("n3.backward()")


@pytest.mark.parametrize("case", TRAINED_ZERO_GRADS, ids=["new-root", "inner-node-at-zero"])
def test_a_zero_grad_that_stops_at_a_zero_grad_fails(case):
    dag, held = case
    grading = session("micrograd.zero_grad", worker=worker_on(STOPS_AT_ZERO.label))
    verdict = wrong(partial(walks.check_zero_grad, held=held), grading, dag)
    assert verdict.reason == "zero_grad left gradients behind"
    assert "n1.grad: expected 0.0, got -2.0" in verdict.details
    assert verdict.details[-1] == walks.UNCONDITIONAL
    (reset,) = printed(verdict.snippet, REFERENCE)
    assert reset == [0.0] * dag.size
    (left,) = printed(verdict.snippet, planted(STOPS_AT_ZERO.label))
    assert left != reset


def test_a_zero_grad_that_stops_at_a_zero_grad_passes_where_every_grad_is_set():
    """Where every node holds a grad, as the other zero_grad tests set them, it is right:
    only a graph in use tells it."""
    dag, _ = TRAINED_ZERO_GRADS[0]
    walks.check_zero_grad(
        session("micrograd.zero_grad", worker=worker_on(STOPS_AT_ZERO.label)), dag
    )


def test_a_ledger_that_sums_in_place_fails_where_ops_hand_out_grad_back():
    """``s = a + b; r = a + s`` with Add's backward handing ``out_grad`` back: b's gradient
    is 1, an in-place sum into a's makes it 2 (and s's, and r's)."""
    grading = session("babygrad.accumulate", worker=worker_on(SUMS_IN_PLACE.label))
    verdict = wrong(accumulation.check_ledger, grading, HANDED_BACK_LEDGERS[0], (2, 3), True)
    assert verdict.reason == "Tensor.backward's sums changed gradients an op handed back"
    assert any(d.startswith("n1.grad (used once; apart it gets") for d in verdict.details)
    assert verdict.details[-1] == accumulation.IN_PLACE
    ones, twos = np.ones((2, 3)).tolist(), np.full((2, 3), 2.0).tolist()
    assert printed(verdict.snippet, REFERENCE) == [[twos, ones, ones, ones]]
    (got,) = printed(verdict.snippet, planted(SUMS_IN_PLACE.label))
    assert got[1] == twos


def test_a_ledger_that_sums_in_place_passes_where_ops_hand_back_new_arrays():
    """The grader's other ops hand back new arrays, as the reference's do: there an in-place
    sum is right, so only ``hands_back`` tells it."""
    grading = session("babygrad.accumulate", worker=worker_on(SUMS_IN_PLACE.label))
    for dag in HANDED_BACK_LEDGERS:
        accumulation.check_ledger(grading, dag, (2, 3))


def test_the_seed_bug_passes_fresh_graphs_and_a_second_backward_from_the_root():
    """Why the graphs in use are needed: on a fresh graph, and again from the same root,
    seeding only a zero grad is right."""
    dag, _, _ = IN_USE_BACKWARDS[0]
    grading = session("micrograd.backward", worker=worker_on(SEEDS_ONLY_AT_ZERO.label))
    walks.check_backward(grading, dag, 2)
    with pytest.raises(WrongAnswer):
        walks.check_backward(grading, dag, roots=(3, 2))


def test_a_ledger_shows_ops_handing_out_grad_back_only_where_they_did():
    """The plain ledger check's snippet makes new tensors, as its ops did; the hands-back
    one's hands ``out_grad`` itself back, as its ops did."""
    overwrites = CATALOGUE["babygrad.accumulate:ledger-overwrites"].label
    grading = session("babygrad.accumulate", worker=worker_on(overwrites))
    plain = wrong(accumulation.check_ledger, grading, HANDED_BACK_LEDGERS[0], (2, 3))
    assert "out_grad if w == 1" not in plain.snippet
    grading = session("babygrad.accumulate", worker=worker_on(overwrites))
    handed = wrong(accumulation.check_ledger, grading, HANDED_BACK_LEDGERS[0], (2, 3), True)
    assert "out_grad if w == 1" in handed.snippet


def test_backward_in_use_counts_each_closures_calls_by_the_roots_that_reach_it():
    """After ``n3.backward()`` then ``n2.backward()``, n2's closure has run twice and n3's
    once: a walk that ran each once more is told so, node by node."""

    def again(case: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        answer["passes"][1]["calls"][2:4] = [3, 2]
        return answer

    dag, roots, held = IN_USE_BACKWARDS[0]
    grading = session("micrograd.backward", {"backward": again})
    verdict = wrong(partial(walks.check_backward, roots=roots, held=held), grading, dag)
    assert (
        verdict.details[0]
        == "after n2.backward() call 2: node(s) [2, 3] ran [3, 2] times, expected [2, 1]"
    )


def test_backward_in_use_names_no_bug_of_a_fresh_graph():
    """Models of bugs on a fresh graph say nothing of a graph in use: all zeros is what an
    unseeded walk gives a fresh graph, not this one."""

    def zeros(case: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        answer["passes"][0]["grads"] = [encode(0.0)] * 3
        return answer

    dag, roots, held = IN_USE_BACKWARDS[1]
    grading = session("micrograd.backward", {"backward": zeros})
    verdict = wrong(partial(walks.check_backward, roots=roots, held=held), grading, dag)
    assert verdict.reason == "wrong gradients after backward()"
    assert verdict.bugs == []
