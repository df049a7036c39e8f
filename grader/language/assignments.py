"""The two assignments, each one value in every vocabulary the grader speaks.

The rubric and the packages name an assignment (``micrograd``, ``babygrad``); the graph
language names the kind of graph it grades (``scalar``, ``tensor``); the op table spells its
operators in a column of its own (``OpRow.micrograd``, ``OpRow.tensor``); a snippet opens with
its imports. One ``Assignment`` carries all four, so nothing translates one into another by
hand."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.language.function_api import FunctionApi
from grader.language.package import PackagedApi
from grader.language.tensor_api import BABYGRAD_API, TensorApi


@dataclass(frozen=True)
class Assignment:
    name: str
    """The rubric's item prefix and the package a submission holds."""
    kind: str
    """The kind of ``Graph`` it grades: ``scalar`` or ``tensor``."""
    spelling: str | TensorApi | FunctionApi
    """How its API writes an op: the op table's column (``micrograd``), a tensor course's
    whole spelling (``TensorApi``), or that of a scalar course whose ops are classes
    (``FunctionApi``)."""
    imports: str
    """What a runnable snippet for it starts with."""
    layout: tuple[str, ...]
    """The files of a prepared submission without which it was not submitted."""
    looked_for: str
    """Where an upload's engine is looked for, as the reports say it."""

    @property
    def folder(self) -> str:
        """The folder of a prepared submission that holds its files: a package's own folder
        (whose files may sit below it, as TinyTorch's ``core/``), else the first file's."""
        if self.package is not None:
            return str(PurePosixPath(self.package.folder, self.package.package))
        return str(PurePosixPath(self.layout[0]).parent)

    def found_in(self, submission: Path) -> Assignment:
        """This assignment with its package under the name the prepared ``submission`` gives
        it (``PackagedApi.aliases``); unchanged where it has one name."""
        if self.package is None or not self.package.aliases:
            return self
        spelling = self.package.found_in(submission)
        assert isinstance(spelling, TensorApi | FunctionApi)
        return dataclasses.replace(
            self, spelling=spelling, imports=spelling.imports, layout=spelling.layout
        )

    @property
    def api(self) -> TensorApi:
        """A tensor assignment's API."""
        if not isinstance(self.spelling, TensorApi):
            raise TypeError(f"{self.name} is not a tensor assignment")
        return self.spelling

    @property
    def functions(self) -> FunctionApi | None:
        """The API of a scalar assignment whose ops are classes (MiniTorch's), else None."""
        return self.spelling if isinstance(self.spelling, FunctionApi) else None

    @property
    def package(self) -> PackagedApi | None:
        """Where the engine lives when it is a package (placed and imported as one), else
        None (micrograd's single engine module)."""
        return self.spelling if isinstance(self.spelling, PackagedApi) else None

    @property
    def suite(self) -> str:
        """The grading suite's file: by kind of graph, and for scalar ops that are classes
        the suite of that model."""
        return (
            "test_scalar_functions.py" if self.functions else f"test_{of_kind(self.kind).name}.py"
        )


def tensor_assignment(name: str, api: TensorApi) -> Assignment:
    """A tensor assignment in ``api``'s spelling."""
    return Assignment(name, "tensor", api, api.imports, api.layout, api.looked_for)


def function_assignment(name: str, api: FunctionApi) -> Assignment:
    """A scalar assignment whose ops are classes, in ``api``'s spelling."""
    return Assignment(name, "scalar", api, api.imports, api.layout, api.looked_for)


MICROGRAD = Assignment(
    "micrograd",
    "scalar",
    "micrograd",
    "from micrograd.engine import Value",
    ("micrograd/engine.py",),
    "micrograd/engine.py, engine.py, or a .py file or notebook defining class Value",
)
BABYGRAD = tensor_assignment("babygrad", BABYGRAD_API)
ASSIGNMENTS = {a.name: a for a in (MICROGRAD, BABYGRAD)}
"""By name, in the rubric's order."""
NAMES = tuple(ASSIGNMENTS)
"""``("micrograd", "babygrad")``: this course's assignments, whose APIs the differential
programs speak (``grader.audit.differential``)."""


def of_name(name: str) -> Assignment:
    """This course's assignment called ``name``: a grading suite's item prefix."""
    return ASSIGNMENTS[name]


def of_kind(kind: str) -> Assignment:
    """The assignment that grades graphs of ``kind``."""
    return next(a for a in ASSIGNMENTS.values() if a.kind == kind)
