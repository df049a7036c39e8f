"""The deep chain's probe (``grader.worker.probes.walks.probe_deep``) runs the student's
``build_topo`` over 100,000 live nodes: no automatic collection may scan them while it does
(it was more than half of a correct walk's time), and collection is back on afterwards."""

from __future__ import annotations

import gc
from types import ModuleType

import pytest

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
    assert probe_deep(_engine(seen), {"length": 5}) == {"order": [0, 1, 2, 3, 4, 5]}
    assert seen == [False] * 7
    assert gc.isenabled()


def test_a_walk_that_raises_leaves_collection_on():
    engine = _engine([])

    def broken(root: object) -> list[object]:
        raise RecursionError("maximum recursion depth exceeded")

    engine.build_topo = broken
    with pytest.raises(RecursionError):
        probe_deep(engine, {"length": 3})
    assert gc.isenabled()
