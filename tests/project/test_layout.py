"""The package's shape: stages as folders, a handful of modules on top, imports that run down
the stages in order, no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.layout import PACKAGE

FLOORS: tuple[tuple[str, ...], ...] = (
    ("language",),
    ("sandbox",),
    ("worker",),
    ("oracles",),
    ("checks",),
    ("grading",),
    ("report",),
    ("run",),
    ("batch", "release", "audit"),
    ("workflows",),
)
"""The stages of a grade, bottom first: a module may import its own floor and those below. The
three jobs (batch grading, the release, the rubric audit) share a floor and import nothing of
one another but through ``SEAMS``."""
STAGES = {stage for floor in FLOORS for stage in floor}
JOBS = set(FLOORS[-2])
SEAMS = {("audit", "grader.batch.batch"): {"DEFAULT_SLOT", "BatchOptions", "run"}}
"""(job, module): the names one job may import of another's module, documented where they are
defined; every other import between job folders is refused."""
BELOW_EVERY_FLOOR = {"grader", "grader.atomic", "grader.layout"}
"""Modules on top of the package that every floor may use (they import no floor)."""
LARGEST_SHARE = 0.2
"""No folder of the package holds more than this share of its lines: a folder is one job."""


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
    found = [n for n, floor in enumerate(FLOORS) if stage in floor]
    return found[0] if found else len(FLOORS)


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


def _job(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in JOBS else None


def test_the_jobs_import_one_another_only_through_their_seams() -> None:
    modules = _modules()
    crossing = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [(node.module, {a.name for a in node.names})]
                submodules = (f"{node.module}.{a.name}" for a in node.names)
                targets += [(module, {"*"}) for module in submodules if module in modules]
            elif isinstance(node, ast.Import):
                targets = [(a.name, {"*"}) for a in node.names]
            else:
                continue
            for target, names in targets:
                job, other = _job(name), _job(target)
                if job and other and other != job and not names <= SEAMS.get((job, target), set()):
                    crossing.append(f"{name} imports {sorted(names)} of {target}")
    assert not crossing, crossing


def test_no_folder_holds_more_than_its_share_of_the_lines() -> None:
    lines = {
        path: len(path.read_text().splitlines())
        for path in PACKAGE.rglob("*.py")
        if path.parent != PACKAGE
    }
    total = sum(lines.values()) + sum(len(p.read_text().splitlines()) for p in PACKAGE.glob("*.py"))
    shares = {
        folder.name: sum(n for path, n in lines.items() if folder in path.parents) / total
        for folder in PACKAGE.iterdir()
        if (folder / "__init__.py").is_file()
    }
    assert max(shares.values()) <= LARGEST_SHARE, shares


def test_the_architecture_page_draws_every_floor() -> None:
    """docs/architecture.md's picture and table of the floors name every stage folder, so a
    new folder cannot go undrawn."""
    docs = PACKAGE.parent / "docs"
    picture, page = (docs / name for name in ("architecture.svg", "architecture.md"))
    missing = [
        f"{stage}/ in {where.name}"
        for stage in sorted(STAGES)
        for where in (picture, page)
        if f"{stage}/" not in where.read_text()
    ]
    assert not missing, missing
