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


def import_engine(
    assignment: str,
    package: str = "babygrad",
    whole: bool = False,
    ops: str = "",
    tensor: str = "",
) -> ModuleType | SimpleNamespace:
    """The engine of ``assignment``, imported from ``sys.path`` as it stands: micrograd's
    ``engine`` module, a tensor course's ``package`` (its ``Tensor``, from the module
    ``tensor`` if named, and its op classes' module ``ops``, ``<package>.ops`` unless
    named), or with ``whole`` the package itself (a scalar course whose ops are classes:
    its scalar, its functions and its walk are all reached from the package)."""
    if assignment == "micrograd":
        return importlib.import_module("micrograd.engine")
    module = importlib.import_module(package)
    if whole:
        return SimpleNamespace(package=module)
    tensor_class = importlib.import_module(tensor).Tensor if tensor else module.Tensor
    return SimpleNamespace(
        Tensor=tensor_class, ops=importlib.import_module(ops or f"{package}.ops")
    )


@contextmanager
def _swapped(package: str, modules: dict[str, ModuleType]) -> Iterator[dict[str, ModuleType]]:
    """While inside, the modules of ``package`` in ``sys.modules`` are ``modules`` (none: it is
    imported afresh); afterwards what is there of it is taken out into the dict this yields,
    and what was hidden is back."""

    hidden = {key: sys.modules.pop(key) for key in owned(package)}
    sys.modules.update(modules)
    left: dict[str, ModuleType] = {}
    try:
        yield left
    finally:
        left.update((key, sys.modules.pop(key)) for key in owned(package))
        sys.modules.update(hidden)


def owned(package: str) -> list[str]:
    """The names in ``sys.modules`` of ``package`` and its modules. One pass of C-level string
    tests: the reference oracle swaps its package in for every graph it evaluates, among the
    thousand modules a grading process holds."""
    dotted = package + "."
    return [key for key in sys.modules if key.startswith(dotted) or key == package]


@contextmanager
def isolated(root: Path, package: str) -> Iterator[dict[str, ModuleType]]:
    """While inside, ``root`` is first on ``sys.path`` and no module of ``package`` is
    imported; afterwards what was imported meanwhile is forgotten and what was hidden is back.

    The reference, the stubs and test engines all name their packages ``micrograd`` and
    ``babygrad``: each must import its own files, and none may displace another already
    loaded. A module imported inside keeps working afterwards (its functions hold their own
    globals); what was imported is left in the dict it yields (``reinstate``). The import
    caches are invalidated because an engine may have been written a moment ago (a test
    fixture) into a directory the finders have already listed.
    """
    with _swapped(package, {}) as imported:
        sys.path.insert(0, str(root))
        try:
            importlib.invalidate_caches()
            yield imported
        finally:
            sys.path.remove(str(root))


def reinstate(engine: object) -> None:
    """Put the modules of a package loaded by ``load_engine`` back in ``sys.modules`` under
    their names, whatever else was loaded since: a package whose functions import a sibling
    module when called (MiniTorch's ``apply`` imports its ``scalar`` module then, the babygrad
    book's operators their ``ops``) finds its own.

    They stay there until another engine of the package is imported or reinstated: the
    reference oracle reinstates its engine for every graph it evaluates, and taking them out
    again after each would cost a pass over every module the process holds. Modules of other
    packages are left alone."""
    modules: dict[str, ModuleType] = getattr(engine, "modules", {})
    if any(sys.modules.get(key) is not module for key, module in modules.items()):
        for key in owned(min(modules, key=len)):
            del sys.modules[key]
        sys.modules.update(modules)


def load_engine(
    root: Path,
    assignment: str,
    package: str = "",
    folder: str = "",
    whole: bool = False,
    paths: tuple[str, str] = ("", ""),
) -> ModuleType | SimpleNamespace:
    """``import_engine`` from ``root`` (its ``folder``), leaving ``sys.modules`` as it was, so
    that several engines (reference, test fixtures) can coexist in one process (``paths``:
    the modules of the op classes and of ``Tensor``, as ``import_engine`` takes them). A package's
    engine keeps the modules it imported (``modules``), for ``reinstate``."""
    package = package or assignment
    with isolated(root / folder, "micrograd" if assignment == "micrograd" else package) as modules:
        engine = import_engine(assignment, package, whole, *paths)
    if isinstance(engine, SimpleNamespace):
        engine.modules = modules
    return engine
