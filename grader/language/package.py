"""Where a course's engine lives when it is a package: its name, the folder that holds it and
the files without which it was not submitted. Shared by every API written as a package (a
tensor course's ``TensorApi``, a scalar course's ``FunctionApi``): uploads are placed, imported
and reported missing the same way whatever the ops look like."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self


@dataclass(frozen=True)
class PackagedApi:
    package: str = "babygrad"
    """The package a submission holds, imported by its name."""
    aliases: tuple[str, ...] = ()
    """The other names the course's editions give the package (the babygrad book writes
    ``babygrad``, its author's own repository ``baby``): an upload whose package has one of
    them is placed, imported and shown in snippets under that name (``found_in``)."""
    folder: str = ""
    """The folder holding the package, relative to the submission (``python`` for needle)."""
    files: tuple[str, ...] = ("tensor.py", "ops.py")
    """The package's files without which the assignment was not submitted (``core/x.py``: in
    a subpackage)."""
    init: bool = True
    """The package has a top ``__init__.py`` (TinyTorch's student repositories have none:
    ``tinytorch`` is then a namespace package, and its first file stands for the upload)."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the package may have, ``package`` first."""
        return (self.package, *self.aliases)

    def named(self, name: str) -> Self:
        """This API with its package called ``name`` (one of ``names``)."""
        return dataclasses.replace(
            self, package=name, aliases=tuple(n for n in self.names if n != name)
        )

    def found_in(self, submission: Path) -> Self:
        """This API under the first of its names whose files the prepared ``submission``
        holds (itself when it holds none: the report says what was looked for)."""
        if self._holds(submission):
            return self
        found = (self.named(name) for name in self.aliases)
        return next((api for api in found if api._holds(submission)), self)

    def _holds(self, submission: Path) -> bool:
        return all((submission / p).is_file() for p in self.layout)

    @property
    def engine_file(self) -> str:
        """The file whose presence says the engine was submitted: the package's
        ``__init__``, or its first file for a package without one."""
        return self._in_package("__init__.py" if self.init else self.files[0])

    @property
    def layout(self) -> tuple[str, ...]:
        """The files of a prepared submission without which it was not submitted."""
        return tuple(self._in_package(name) for name in self.files)

    @property
    def looked_for(self) -> str:
        """Where a submission's package is looked for, as the reports say it."""
        *others, last = self.files
        files = f"{', '.join(others)} and {last}" if others else last
        where = f" (in {self.folder}/)" if self.folder else ""
        folders = " or ".join(f"{name}/" for name in self.names)
        return f"a {folders} folder with {files}{where}"

    def _in_package(self, name: str) -> str:
        return "/".join(p for p in (self.folder, self.package, name) if p)


def resolve(root: Any, dotted: str) -> Any:
    """``root.a.b`` for ``"a.b"``: an API names attributes by dotted paths."""
    for name in dotted.split("."):
        root = getattr(root, name)
    return root
