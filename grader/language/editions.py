"""A course's editions: the years its homework changed, told apart from the upload.

needle's homework 1 of 2022 keeps its ops in ``python/needle/ops.py`` and has no ``EWisePow``;
from 2023 they live in ``python/needle/ops/ops_mathematic.py`` and ``EWisePow`` is there. A
student graded on an op their edition never asked for would lose points for the year they took
the course: an op the detected edition lacks is not graded, and is not in the total (the item is
reported "not in this edition", 0 of 0 points).

An edition also knows the code its starter hands out (``given``: each op's class or function,
by ``fingerprint``). A class the upload left as given is the course's, not the student's: its op
is neither graded nor drawn, and its item is reported "given by the course", 0 of 0 points
(2023's ``EWisePow`` is given code whose gradient raises; no student touches it). A class the
student changed is theirs, and graded. The ledger may be given too (11-785 hands out its
``GradientBuffer`` whole every year): left as given, the item that grades it is the course's.

An edition's walk may lack a part the profile's grades alone (``walk``: MiniTorch's 2020
Module 1 has no ``topological_sort``, its ``backpropagate`` walks breadth-first on its own):
an item whose tests need that part is not in the edition, and says why in the course's words.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.language.parsing import parse

NOT_IN_EDITION = "not_in_edition"
"""The status of an item whose op the submission's edition does not have, or gives."""
FINGERPRINT = r"^[0-9a-f]{16}$"
"""A fingerprint as a profile writes it: 16 hexadecimal digits."""


@dataclass(frozen=True)
class Edition:
    """One edition of an assignment (a profile's ``editions:``)."""

    name: str
    marker: str
    """A file, relative to the package's folder, that only this edition's layout has."""
    lacks: tuple[str, ...] = ()
    """The ops of the profile's list this edition's homework does not have."""
    defines: tuple[str, ...] = ()
    """The names (``Value.relu``) the marker file must all define for the upload to be this
    edition: a lecture and its repository keep the same file and differ in what it holds."""
    given: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Op (or ``ledger``) -> the fingerprints of the class or function this edition's starter
    gives for it, as given."""
    kept: tuple[str, ...] = ()
    """The ops (and ``ledger``) the graded upload left as given (``left_as_given``)."""
    as_given: bool = False
    """Said of an item whose op the upload kept as given, not one the edition lacks."""
    broadcasts: bool | None = None
    """The contract's ``broadcasts`` where this edition's differs from the profile's
    ``api:`` (11-785's 2024 HW1 leaves the reduction of broadcast gradients optional, HW3P1
    requires it); None: the profile's."""
    without: tuple[str, ...] = ()
    """The names the marker file must define none of: an engine holding both editions' own
    ops (the lecture's tanh and exp, the repository's relu) is the edition whose other names
    (the repository's ``__rsub__``) it lacks."""
    api: Mapping[str, Any] = field(default_factory=dict)
    """The profile's ``api:`` keys this edition's layout spells otherwise (MiniTorch's 2021
    Module 1 keeps ``central_difference`` in ``scalar.py`` and its chain rule in
    ``History.backprop_step``); a mapping key (``variable``) is merged into the profile's."""
    walk: Mapping[str, str] = field(default_factory=dict)
    """The profile's ``walk:`` keys this edition's layout has otherwise (MiniTorch's 2020
    Module 1: ``topo: nested``, no ``topological_sort`` to grade alone)."""
    walk_words: str = ""
    """The course's own words for that walk, with where they are, as feedback quotes them."""
    walked: bool = False
    """Said of an item whose tests need a part of the walk this edition does not have."""

    def because(self, needs: Iterable[str]) -> Edition:
        """This edition as the reason a test of ``needs`` does not run: the code is the
        course's where only ops the upload kept as given are missing; the walk's layout where
        a part of the walk (``walk.topo``) this edition changes is."""
        missing = set(needs) & {*self.lacks, *self.kept}
        walked = any(
            need.startswith("walk.") and need.removeprefix("walk.") in self.walk for need in needs
        )
        return dataclasses.replace(
            self,
            as_given=bool(missing) and missing <= set(self.kept),
            walked=walked and not missing,
        )

    def feedback(self, title: str) -> str:
        """What the report says of an item this edition does not have, or gives."""
        if self.as_given:
            return (
                f"given by the course: {title} is code the course's starter hands out (in "
                f"the layout with {self.marker}), left as given in the upload, so it is "
                "neither graded nor counted in the total"
            )
        if self.walked:
            return (
                f"not in this edition: the {self.name} homework's walk has no such part to "
                f"ask alone ({title}). {self.walk_words}. It is neither graded nor counted "
                "in the total"
            )
        return (
            f"not in this edition: {title} is not part of the {self.name} homework (its "
            f"upload has {self.marker}), so it is neither graded nor counted in the total"
        )


def detected(editions: Iterable[Edition], package: Path) -> Edition | None:
    """The first edition whose marker file ``package`` (the package's folder) holds, defining
    each of its ``defines`` and none of its ``without``."""
    return next((e for e in editions if _holds(package / e.marker, e)), None)


def _holds(file: Path, edition: Edition) -> bool:
    if not file.is_file():
        return False
    if not edition.defines and not edition.without:
        return True
    tree = _parsed(file)
    has = [_definition(tree, name.split(".")) is not None for name in edition.defines]
    lacks = [_definition(tree, name.split(".")) is None for name in edition.without]
    return all(has) and all(lacks)


def fingerprint(source: str, name: str) -> str | None:
    """The fingerprint of the top-level class or function ``name`` in ``source``: a digest of
    its syntax tree without docstrings, so comments, blank lines and quotes do not change it
    and any change to the code does (None: no such definition, or not Python)."""
    tree = _tree(source)
    found = None if tree is None else _definition(tree, [name])
    return None if found is None else _printed(found)


def fingerprints(source: str) -> set[str]:
    """The fingerprints of every top-level class and function of ``source``: a digest names
    its definition, so a print of one name never matches a definition of another."""
    tree = _tree(source)
    return {
        _printed(node)
        for node in (tree.body if tree is not None else [])
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _tree(source: str) -> ast.Module | None:
    try:
        return parse(source)
    except (SyntaxError, ValueError):
        return None


def _printed(found: ast.AST) -> str:
    for node in ast.walk(found):
        body = getattr(node, "body", None)
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(found).encode()).hexdigest()[:16]


def left_as_given(edition: Edition, package: Path) -> Edition:
    """``edition`` with the parts of its starter (``given``'s keys) that some file of
    ``package`` defines exactly as the edition gives them: a class or function of that
    name, whichever the course calls it (needle's EWiseAdd, 11-785's add_backward)."""
    found: set[str] = set()
    for path in sorted(package.rglob("*.py")):
        found |= fingerprints(path.read_text(errors="replace"))
    kept = tuple(part for part, prints in edition.given.items() if found & set(prints))
    return dataclasses.replace(edition, kept=kept)


def _parsed(file: Path) -> ast.Module:
    try:
        return parse(file.read_text(errors="replace"), str(file))
    except (SyntaxError, ValueError):
        return ast.Module(body=[], type_ignores=[])


def _definition(scope: ast.AST, names: list[str]) -> ast.AST | None:
    """The class or function reached through ``names`` from ``scope``'s top level."""
    for name in names:
        scope = next(
            (
                node
                for node in getattr(scope, "body", [])
                if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name == name
            ),
            None,
        )
        if scope is None:
            return None
    return scope
