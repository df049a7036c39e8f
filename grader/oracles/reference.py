"""The course's own solution, run in the trusted parent through the same probes as students."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from grader.language.assignments import of_kind
from grader.language.graphs import Graph
from grader.oracles import Evaluation, OracleUnavailable
from grader.worker import probes, protocol
from grader.worker.engines import load_engine

name = "reference"


class ReferenceOracle:
    """Evaluates graphs with the reference engine (in float64 for babygrad)."""

    name = name

    def __init__(self, root: Path) -> None:
        if not (root / "micrograd" / "engine.py").is_file():
            raise OracleUnavailable(f"no reference engine in {root}")
        self.root = root
        self.engines: dict[str, Any] = {}

    def engine(self, kind: str) -> Any:
        assignment = of_kind(kind).name
        if assignment not in self.engines:
            engine = load_engine(self.root, assignment)
            if assignment == "babygrad":
                engine = SimpleNamespace(Tensor=_float64(engine.Tensor), ops=engine.ops)
            self.engines[assignment] = engine
        return self.engines[assignment]

    def evaluate_graph(self, graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
        engine = self.engine(graph.kind)
        if out_grad is None:
            result = probes.probe_graph(engine, {"graph": graph.to_json()})
            grads = result["grads"][: len(graph.leaves)]
        else:
            result = probes.probe_op(
                engine, {"graph": graph.to_json(), "out_grad": np.asarray(out_grad).tolist()}
            )
            grads = result["grads"]
        values = [protocol.decode_array(v, "reference value") for v in result["values"]]
        if out_grad is not None:  # the op probe reports only the output's value
            values = [*graph.leaves, *values]
        return Evaluation(
            tuple(values), tuple(protocol.decode_array(g, "reference grad") for g in grads)
        )


def _float64(tensor_class: type) -> Any:
    """Build reference leaves in float64: the oracle should not carry float32 rounding."""

    def make(data: Any, requires_grad: bool = True, dtype: str = "float64") -> Any:
        return tensor_class(
            np.asarray(data, dtype=np.float64), requires_grad=requires_grad, dtype=dtype
        )

    return make
