"""PyTorch in float64: an independent engine everyone trusts (an optional dependency)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from grader.graphs import Graph
from grader.oracles import Evaluation, OracleUnavailable

name = "pytorch"

try:
    import torch
except ImportError:  # torch is an optional extra
    torch = None


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


def available() -> bool:
    return torch is not None


def evaluate_graph(graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
    if torch is None:
        raise OracleUnavailable("torch is not installed")
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
