"""PyTorch in float64: an independent engine everyone trusts (an optional dependency)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from grader.language.graphs import Graph
from grader.oracles import Evaluation, OracleUnavailable

name = "pytorch"

_torch: Any = None


def _transpose(x: Any, axes: tuple[int, ...] | None) -> Any:
    return x.transpose(-1, -2) if axes is None else x.permute(*axes)


def _sum(x: Any, axes: int | tuple[int, ...] | None) -> Any:
    return x.sum() if axes is None else x.sum(dim=axes)


TORCH_OPS: dict[str, Callable[..., Any]] = {
    "add": lambda a, b, p: a + b,
    "mul": lambda a, b, p: a * b,
    "sub": lambda a, b, p: a - b,
    "div": lambda a, b, p: a / b,
    "pow": lambda a, b, p: a ** b,
    "neg": lambda a, p: -a,
    "log": lambda a, p: a.log(),
    "exp": lambda a, p: a.exp(),
    "sqrt": lambda a, p: a.sqrt(),
    "abs": lambda a, p: a.abs(),
    "relu": lambda a, p: a.relu(),
    "sigmoid": lambda a, p: a.sigmoid(),
    "tanh": lambda a, p: a.tanh(),
    "powk": lambda a, p: a ** p,
    "add_scalar": lambda a, p: a + p,
    "sub_scalar": lambda a, p: a - p,
    "mul_scalar": lambda a, p: a * p,
    "div_scalar": lambda a, p: a / p,
    "radd": lambda a, p: p + a,
    "rsub": lambda a, p: p - a,
    "rmul": lambda a, p: p * a,
    "rdiv": lambda a, p: p / a,
    "reshape": lambda a, p: a.reshape(p),
    "transpose": _transpose,
    "sum": _sum,
    "broadcast_to": lambda a, p: a.broadcast_to(p),
    "matmul": lambda a, b, p: a @ b,
}


def location() -> Path | None:
    """Where torch is installed (without importing it: that costs a second), or None."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def available() -> bool:
    return location() is not None


def _import_torch() -> Any:
    global _torch
    if _torch is None:
        try:
            import torch
        except ImportError:
            raise OracleUnavailable("torch is not installed") from None
        _torch = torch
    return _torch


def evaluate_graph(graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
    torch = _import_torch()
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in graph.leaves]
    values = list(leaves)
    for node in graph.nodes:
        values.append(TORCH_OPS[node.op](*(values[i] for i in node.args), node.param))
    output = values[-1]
    grad = torch.ones_like(output) if out_grad is None else torch.as_tensor(
        np.asarray(out_grad, np.float64))
    grads = torch.autograd.grad(output, leaves, grad, allow_unused=True)
    return Evaluation(
        tuple(v.detach().numpy().copy() for v in values),
        tuple(np.zeros(leaf.shape) if g is None else g.numpy().copy()
              for leaf, g in zip(leaves, grads, strict=True)),
    )
