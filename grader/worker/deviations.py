"""An engine written to another spelling of the course's API, said in one line.

A student who names a node's operands ``_children`` (as Karpathy's constructor argument is
called) has not left ``_prev`` unwritten: they spelled it otherwise. When the grader reaches
for an attribute the engine lacks, this looks at what the object has instead and names it, so
the feedback says what was found and what the course expects rather than "not implemented".
Only the standard library: it runs in the worker, on the student's objects, and reads them.
"""

from __future__ import annotations

import difflib
from types import ModuleType
from typing import Any

OPERANDS = ("_prev", "_inputs")
"""The attributes in which this course's nodes keep their operands (micrograd, babygrad)."""


def _operand_holders(obj: Any, name: str) -> list[str]:
    """The instance attributes of ``obj`` that hold nodes of its own type (or none yet)."""
    own = getattr(obj, "__dict__", None)
    if not isinstance(own, dict):
        return []
    return [
        key
        for key, value in own.items()
        if key != name
        and isinstance(value, tuple | list | set | frozenset)
        and all(type(x) is type(obj) for x in value)
    ]


def deviation(exc: AttributeError) -> str | None:
    """What the object has where the course's API expects ``exc.name``, or None."""
    obj, name = getattr(exc, "obj", None), getattr(exc, "name", None)
    if obj is None or not name:
        return None
    kind = "engine module" if isinstance(obj, ModuleType) else type(obj).__name__
    if name in OPERANDS:
        holders = _operand_holders(obj, name)
        if holders:
            return (
                f"not implemented: {name} (your {kind} keeps its operands in "
                f"`{holders[0]}`; this course's API calls them `{name}`)"
            )
    try:
        names = [a for a in dir(obj) if not a.startswith("__")]
    except Exception:  # noqa: BLE001 - a student's __dir__ may raise anything
        return None
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.8)
    if close:
        return f"not implemented: {name} (your {kind} has `{close[0]}`: is it that?)"
    return None
