"""How the grader imports an engine: micrograd as its ``engine`` module, babygrad as its
``Tensor`` and ``ops``, the shape every probe takes.

Here, in the worker's stage, because the worker imports the student's engine and the trusted
parent imports the reference's the same way; the worker must not import the trusted side, so
the shared loader sits at its floor. Only the standard library: the student release ships it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType, SimpleNamespace


def import_engine(assignment: str, package: str = "babygrad") -> ModuleType | SimpleNamespace:
    """The engine of ``assignment``, imported from ``sys.path`` as it stands: micrograd's
    ``engine`` module, or a tensor course's ``package`` (its ``Tensor`` and ``ops``)."""
    if assignment == "micrograd":
        return importlib.import_module("micrograd.engine")
    module = importlib.import_module(package)
    return SimpleNamespace(Tensor=module.Tensor, ops=importlib.import_module(f"{package}.ops"))


@contextmanager
def isolated(root: Path, package: str) -> Iterator[None]:
    """While inside, ``root`` is first on ``sys.path`` and no module of ``package`` is
    imported; afterwards what was imported meanwhile is forgotten and what was hidden is back.

    The reference, the stubs and test engines all name their packages ``micrograd`` and
    ``babygrad``: each must import its own files, and none may displace another already
    loaded. A module imported inside keeps working afterwards (its functions hold their own
    globals). The import caches are invalidated because an engine may have been written a
    moment ago (a test fixture) into a directory the finders have already listed.
    """

    def owned(key: str) -> bool:
        return key == package or key.startswith(package + ".")

    hidden = {key: module for key, module in sys.modules.items() if owned(key)}
    for key in hidden:
        del sys.modules[key]
    sys.path.insert(0, str(root))
    try:
        importlib.invalidate_caches()
        yield
    finally:
        sys.path.remove(str(root))
        for key in [key for key in sys.modules if owned(key)]:
            del sys.modules[key]
        sys.modules.update(hidden)


def load_engine(
    root: Path, assignment: str, package: str = "", folder: str = ""
) -> ModuleType | SimpleNamespace:
    """``import_engine`` from ``root`` (its ``folder``), leaving ``sys.modules`` as it was, so
    that several engines (reference, test fixtures) can coexist in one process."""
    package = package or assignment
    with isolated(root / folder, "micrograd" if assignment == "micrograd" else package):
        return import_engine(assignment, package)
