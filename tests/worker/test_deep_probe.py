"""The deep chain's probe (``grader.worker.probes.walks.probe_deep``) runs the student's
``build_topo`` over 100,000 live nodes: no automatic collection may scan them while it does
(it was more than half of a correct walk's time), and collection is back on afterwards."""

from __future__ import annotations

import gc
from types import ModuleType

import pytest

from grader.worker import answers
from grader.worker.probes.walks import probe_deep


def _engine(seen: list[bool]) -> ModuleType:
    """A chain-only engine that notes whether automatic collection is on as it works."""
    engine = ModuleType("engine")

    class Value:
        def __init__(self, data: float, _children: tuple = (), _op: str = "") -> None:
            seen.append(gc.isenabled())
            self.data, self._prev = data, _children

    def build_topo(root: Value) -> list[Value]:
        seen.append(gc.isenabled())
        order = [root]
        while order[-1]._prev:
            order.append(order[-1]._prev[0])
        return order[::-1]

    engine.Value, engine.build_topo = Value, build_topo
    return engine


def test_the_chain_is_built_and_walked_uncollected_and_collection_is_back_after():
    seen: list[bool] = []
    assert gc.isenabled()
    assert probe_deep(_engine(seen), {"length": 5}) == {"runs": [[0, 6]]}
    assert seen == [False] * 7
    assert gc.isenabled()


def test_another_order_is_sent_as_runs_of_consecutive_indices_and_read_back():
    """Root first, a node twice, an object not the grader's (-1): what the parent reads back
    (``answers.expand_runs``) is each entry's index, as the walk returned them."""
    engine = _engine([])
    walk = engine.build_topo

    def odd_walk(root: object) -> list[object]:
        order = walk(root)
        return [*order[3:], order[0], order[0], object(), *order[:3][::-1]]

    engine.build_topo = odd_walk
    answer = probe_deep(engine, {"length": 5})
    assert answer == {"runs": [[3, 3], [0, 1], [0, 1], [-1, 1], [2, 1], [1, 1], [0, 1]]}
    assert answers.expand_runs(answer, "runs", 60) == [3, 4, 5, 0, 0, -1, 2, 1, 0]


def test_a_walk_that_raises_leaves_collection_on():
    engine = _engine([])

    def broken(root: object) -> list[object]:
        raise RecursionError("maximum recursion depth exceeded")

    engine.build_topo = broken
    with pytest.raises(RecursionError):
        probe_deep(engine, {"length": 3})
    assert gc.isenabled()
