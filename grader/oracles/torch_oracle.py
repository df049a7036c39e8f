"""PyTorch in float64: an independent engine everyone trusts (an optional dependency)."""

from __future__ import annotations

import gc
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from grader.language.graphs import OPS, Graph, Op
from grader.oracles import Evaluation, OracleUnavailable

name = "pytorch"

_torch: Any = None


def location() -> Path | None:
    """Where torch is installed (without importing it: that costs a second), or None."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def available() -> bool:
    return location() is not None


def load() -> Any:
    """PyTorch, imported on first use (``OracleUnavailable`` where it is not installed). Its
    objects, hundreds of thousands, live as long as the process: they are moved out of the
    collector's sight (``gc.freeze``), which scanned them all at each full collection (a
    twentieth of a grade's CPU where PyTorch is the oracle)."""
    global _torch
    if _torch is None:
        try:
            import torch
        except ImportError:
            raise OracleUnavailable("torch is not installed") from None
        gc.freeze()
        _torch = torch
    return _torch


def evaluate_graph(
    graph: Graph, out_grad: np.ndarray | None = None, ops: Mapping[str, Op] = OPS
) -> Evaluation:
    """Values and leaf gradients by PyTorch's autograd over ``ops`` (a course's op table)."""
    torch = load()
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in graph.leaves]
    values = list(leaves)
    for node in graph.nodes:
        values.append(ops[node.op].torch(*(values[i] for i in node.args), node.param))
    output = values[-1]
    grad = (
        torch.ones_like(output)
        if out_grad is None
        else torch.as_tensor(np.asarray(out_grad, np.float64))
    )
    grads = torch.autograd.grad(output, leaves, grad, allow_unused=True)
    return Evaluation(
        tuple(v.detach().numpy().copy() for v in values),
        tuple(
            np.zeros(leaf.shape) if g is None else g.numpy().copy()
            for leaf, g in zip(leaves, grads, strict=True)
        ),
    )
