"""The grader's built-in implementations of the one protocol (``grader.language.adapters``'s
``EngineProtocol``), one small module per API shape, and the wrapper of a course adapter:

- ``closures``: micrograd's ``Value``, each op's gradient a ``_backward`` closure;
- ``functions``: a scalar course whose ops are ``Function`` classes (MiniTorch's);
- ``tensors``: a tensor course whose ops are op classes with ``backward(out_grad, node)``
  (babygrad, needle), in the course's spelling (``TensorApi``);
- ``adapted``: a course's own adapter module (TinyTorch's).

``shape_of`` wraps an engine as the runner (or the trusted parent, for the reference) loaded
it. A shape remembers what it made (each op's object, the nodes of a graph): one shape per
probe call.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from grader.language.adapters import EngineProtocol
from grader.worker.probes.build import functions_of
from grader.worker.shapes.adapted import Adapted
from grader.worker.shapes.closures import Closures
from grader.worker.shapes.functions import Functions
from grader.worker.shapes.tensors import Tensors


def shape_of(engine: Any, kind: str) -> EngineProtocol:
    """``engine`` through the protocol, for a graph of ``kind`` (``scalar``, ``tensor``)."""
    if isinstance(engine, SimpleNamespace) and hasattr(engine, "adapter"):
        return Adapted(engine)
    if functions_of(engine) is not None:
        return Functions(engine)
    if kind == "scalar":
        return Closures(engine)
    return Tensors(engine)


__all__ = ["Adapted", "Closures", "Functions", "Tensors", "shape_of"]
