"""Course adapters: a page of Python a course ships (``api: {adapter: adapter.py}``) where its
API fits none of the grader's built-in spellings (TinyTorch's ``*Backward`` classes, made
after the forward and asked with ``apply(grad_output)`` on bare arrays).

The protocol is what the worker's probes need for the items such a course grades, and no
more. The adapter module defines, in the course's own words:

- ``load() -> engine``: import the student's engine (the submission is on ``sys.path``);
  whatever it returns is passed back as ``engine``.
- ``leaf(engine, data) -> tensor``: a leaf that requires grad, from a float64 array.
- ``value(tensor) -> array``: a tensor's forward value.
- ``apply(engine, op, inputs, param) -> tensor``: op ``op`` of the grader's op table applied
  to ``inputs`` as a student would (``param``: its parameter, None for the default).
- ``gradients(engine, tensor, out_grad) -> sequence``: ask the op that made ``tensor``, alone, for
  its inputs' gradients given ``out_grad``, each delivered as the course's given code
  delivers it to an input (None: no gradient).

The grader walks the graph itself (``grader.worker.probes.adapted``): the course's own walk is
never graded through an adapter. Only the worker runs an adapter (``load_adapter``, called by
its runner), on the student's engine; the trusted parent only checks, without running it,
that it defines these functions (``missing``, when the profile is loaded).
"""

from __future__ import annotations

import ast
from types import ModuleType

PROTOCOL = ("load", "leaf", "value", "apply", "gradients")
"""The functions an adapter defines."""


def missing(source: str) -> list[str]:
    """The protocol's functions ``source`` does not define at its top level (a syntax error
    raises ``SyntaxError``)."""
    defined = {node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}
    return [name for name in PROTOCOL if name not in defined]


def load_adapter(source: str, name: str) -> ModuleType:
    """The adapter as a module of its own (in the worker only)."""
    module = ModuleType(f"course_adapter_{name}")
    exec(compile(source, f"<course adapter {name}>", "exec"), module.__dict__)  # noqa: S102
    return module
