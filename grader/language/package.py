"""Where a course's engine lives when it is a package: its name, the folder that holds it and
the files without which it was not submitted. Shared by every API written as a package (a
tensor course's ``TensorApi``, a scalar course's ``FunctionApi``): uploads are placed, imported
and reported missing the same way whatever the ops look like."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PackagedApi:
    package: str = "babygrad"
    """The package a submission holds, imported by its name."""
    folder: str = ""
    """The folder holding the package, relative to the submission (``python`` for needle)."""
    files: tuple[str, ...] = ("tensor.py", "ops.py")
    """The package's files without which the assignment was not submitted (``core/x.py``: in
    a subpackage)."""
    init: bool = True
    """The package has a top ``__init__.py`` (TinyTorch's student repositories have none:
    ``tinytorch`` is then a namespace package, and its first file stands for the upload)."""

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
        return f"a {self.package}/ folder with {files}{where}"

    def _in_package(self, name: str) -> str:
        return "/".join(p for p in (self.folder, self.package, name) if p)


def resolve(root: Any, dotted: str) -> Any:
    """``root.a.b`` for ``"a.b"``: an API names attributes by dotted paths."""
    for name in dotted.split("."):
        root = getattr(root, name)
    return root
