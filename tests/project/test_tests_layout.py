"""The tests' shape mirrors the package's: a folder of tests per stage folder of ``grader/`` (the
stages ``test_layout.FLOORS`` orders, which ``test_layout`` holds equal to the package's
folders), ``flows/`` for whole runs as users make them, ``project/`` for the repository itself,
and the shared helpers in ``helpers/``. A change to one floor thus names the tests that guard
it, and no test module imports another: what two share is a helper's."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.layout import PACKAGE
from tests.helpers import ENGINES, FIXTURES, SANDBOX_FIXTURES, TESTS

BESIDE_THE_STAGES = {"flows", "project"}
"""Test folders that prove no one stage: end-to-end flows, and the repository's own shape."""
HELPERS = TESTS / "helpers"
DATA = {ENGINES, FIXTURES, SANDBOX_FIXTURES}
"""Folders of engines and programs the tests run, not tests: never imported as test code."""
ON_TOP = {
    "__init__.py",
    "conftest.py",
    "fork_costs.py",
    "same_grades.py",
    "seed_sweep.py",
    "self_audit.py",
}
"""The package's marker, pytest's shared fixtures and the four commands (``python -m
tests.same_grades``, ``tests.seed_sweep``, ``tests.self_audit``, ``tests.fork_costs``)."""


def _stages() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def _folders() -> set[Path]:
    return {p for p in TESTS.iterdir() if p.is_dir() and p not in DATA and p.name != "__pycache__"}


def _code() -> list[Path]:
    """Every Python file of the tests but the data folders' (engines and fixtures)."""
    return sorted(p for p in TESTS.rglob("*.py") if not any(folder in p.parents for folder in DATA))


def test_each_stage_of_the_package_has_its_folder_of_tests() -> None:
    folders = {folder.name for folder in _folders()}
    assert folders == _stages() | BESIDE_THE_STAGES | {HELPERS.name}
    for folder in _folders():
        assert (folder / "__init__.py").is_file(), folder
        if folder != HELPERS:
            assert list(folder.glob("test_*.py")), f"{folder.name}/ holds no test module"


def test_test_modules_sit_in_the_folders_and_only_commands_on_top() -> None:
    assert {p.name for p in TESTS.glob("*.py")} <= ON_TOP
    misplaced = [
        str(p.relative_to(TESTS))
        for p in _code()
        if p.name.startswith("test_") and (p.parent.parent != TESTS or p.parent == HELPERS)
    ]
    assert not misplaced, misplaced
    assert not [p.name for p in HELPERS.glob("test_*.py")]


def _imported(path: Path) -> set[str]:
    """The modules of ``tests`` that ``path`` imports: ``from tests.x import y`` counts
    ``tests.x`` and ``tests.x.y`` (``y`` may be a module), a relative import counts too."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            found |= {module, *(f"{module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {name for name in found if name.startswith((".", "tests."))}


def test_no_test_module_is_imported_by_another_module() -> None:
    importing = {
        f"{path.relative_to(TESTS)} imports {name}"
        for path in _code()
        for name in _imported(path)
        if any(part.startswith("test_") for part in name.split("."))
    }
    assert not importing, sorted(importing)
