"""The package's shape: stages as folders, a handful of modules on top, imports that run down
the stages in order, no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.layout import PACKAGE

FLOORS = ("language", "worker", "oracles", "checks", "grading", "report", "workflows")
"""The stages of a grade, bottom first: a module may import its own floor and those below."""
STAGES = set(FLOORS)
BELOW_EVERY_FLOOR = {"grader", "grader.atomic", "grader.layout"}
"""Modules on top of the package that every floor may use (they import no floor)."""


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(path: Path, known: dict[str, Path]) -> set[str]:
    """Every grader module ``path`` imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found & known.keys()


def test_the_stages_are_the_folders_and_few_modules_sit_on_top() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == STAGES
    assert {p.name for p in PACKAGE.glob("*.py")} <= {
        "__init__.py",
        "__main__.py",
        "atomic.py",
        "layout.py",
    }


def _floor(module: str) -> int:
    """A module's floor: -1 for those below every floor, len(FLOORS) for ``__main__``."""
    if module in BELOW_EVERY_FLOOR:
        return -1
    stage = module.split(".")[1]
    return FLOORS.index(stage) if stage in FLOORS else len(FLOORS)


def test_imports_run_down_the_floors() -> None:
    modules = _modules()
    upward = sorted(
        f"{name} imports {target}, a floor above its own"
        for name, path in modules.items()
        for target in _imports(path, modules)
        if _floor(target) > _floor(name)
    )
    assert not upward, upward


def test_the_modules_below_every_floor_import_no_floor() -> None:
    modules = _modules()
    assert {
        target for name in BELOW_EVERY_FLOOR for target in _imports(modules[name], modules)
    } <= BELOW_EVERY_FLOOR


def test_no_import_cycle_between_grader_modules() -> None:
    modules = _modules()
    edges = {name: _imports(path, modules) - {name} for name, path in modules.items()}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        for target in sorted(edges[name]):
            assert target not in path, "import cycle: " + " -> ".join(
                path[path.index(target) :] + [target]
            )
            if target not in done:
                visit(target, [*path, target])
        done.add(name)

    for name in sorted(modules):
        visit(name, [name])
