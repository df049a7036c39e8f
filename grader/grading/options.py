"""The options that decide a grade: one record, declared once, from the command line into the
grading process.

Each field of ``GradeOptions`` is one option. Its default is the field's; its command-line
spelling, where it has one, sits beside it (``spelled``) and ``grader.run.arguments``
builds the shared grading options from those. The record crosses into the trusted pytest
process as one ``--grader-<field>`` option per field, written by ``pytest_arguments`` and read
back by ``from_pytest`` into the same record: neither side names a field, so a new option is a
new field, nothing more.
"""

from __future__ import annotations

import argparse
from argparse import SUPPRESS
from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args, get_origin, get_type_hints

from grader.layout import DEFAULT_REFERENCE, DEFAULT_RUBRIC
from grader.sandbox.launch import Limits
from grader.sandbox.sandbox import MODES

if TYPE_CHECKING:  # the command-line process has no need of pytest itself
    import pytest

IN_MEMORY = ":memory:"
"""``replay`` for a batch lane's process: recordings live in ``grader.grading.replay.MEMORY``
(here, not there, so that the command line need not import Hypothesis to name it)."""
SPELLING = "spelling"
"""The field metadata key of an option's command-line spelling (``spelled``)."""


def spelled(flag: str, **argparse_options: Any) -> dict[str, Any]:
    """Field metadata: the option's command-line spelling, as ``add_argument`` takes it (its
    default and destination are the field's)."""
    return {SPELLING: (flag, argparse_options)}


def optional_path(text: str) -> Path | None:
    """A path, or none at all for an empty one (``--reference ''``: grade without it)."""
    return Path(text) if text else None


def seconds(text: str) -> float:
    """A positive number of seconds."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


@dataclass(frozen=True)
class GradeOptions:
    """Everything that determines a grade, besides the submission's files."""

    submission: Path
    assignment: str = field(
        default="all",
        metadata=spelled(
            "--assignment",
            help="grade one assignment of the course (micrograd, babygrad; another course's "
            "own, such as needle), or all",
        ),
    )
    seed: int | None = field(
        default=None,
        metadata=spelled("--seed", type=int, help="secret grading seed (never shown to students)"),
    )
    only: tuple[str, ...] = field(
        default=(),
        metadata=spelled(
            "--only", action="append", help="grade only this item or id prefix (repeatable)"
        ),
    )
    rubric: Path = field(default=DEFAULT_RUBRIC, metadata=spelled("--rubric", type=Path))
    reference: Path | None = field(
        default=DEFAULT_REFERENCE,
        metadata=spelled(
            "--reference",
            type=optional_path,
            help="reference solutions, used as an oracle when present",
        ),
    )
    torch: bool = field(
        default=True,
        metadata=spelled(
            "--no-torch",
            action="store_false",
            help="never use PyTorch as an oracle, even where it is installed",
        ),
    )
    """PyTorch may be an oracle where installed (``--no-torch``: grade as the student release
    does without it)."""
    sandbox: str = field(default="auto", metadata=spelled("--sandbox", choices=MODES))
    slot: int = field(default=0, metadata=spelled("--slot", type=int, help=argparse.SUPPRESS))
    memory_mb: int = Limits().memory_mb
    """The worker's address-space limit (Gradescope's container has 768 MB in all)."""
    replay: Path | str | None = None
    """Where tests' recorded runs are kept and replayed from (``grader.grading.replay``):
    a folder, or ``IN_MEMORY`` in a batch lane; None: every test runs under Hypothesis."""
    import_budget: float | None = field(
        default=None,
        metadata=spelled(
            "--import-budget",
            type=seconds,
            metavar="SECONDS",
            help="CPU seconds importing the submission may take before it is reported as timed "
            "out (default: the rubric's import_budget, else twice the time limit of the item "
            "being graded)",
        ),
    )
    """None: ``grader.checks.session.IMPORT_BUDGET_FACTOR`` request budgets of the item."""
    verdicts_only: bool = field(
        default=False, metadata=spelled("--verdicts-only", action="store_true", help=SUPPRESS)
    )
    """Scores and statuses alone, for the proofs that grade thousands of engines
    (``tests/seed_sweep.py``): a failing test's counterexample is neither shrunk nor run afresh
    (``grader.grading.reproduce``). Neither changes a score or a status, only the feedback."""


def command_line_default(option: Field[Any]) -> Any:
    """The field's default as a parser holds it: a repeated option's values are a list."""
    return list(option.default) if isinstance(option.default, tuple) else option.default


def as_field(value: Any) -> Any:
    """A parsed value as a field holds it: a repeated option's list is a tuple."""
    return tuple(value) if isinstance(value, list) else value


_HINTS = get_type_hints(GradeOptions)
_FIELDS = fields(GradeOptions)


def _repeated(option: Field[Any]) -> bool:
    return get_origin(_HINTS[option.name]) is tuple


def _optional(option: Field[Any]) -> bool:
    return type(None) in get_args(_HINTS[option.name])


def _kind(option: Field[Any]) -> Callable[[str], Any]:
    """What one command-line word of the field becomes: its type where it has one besides
    None (``replay``, a folder or ``IN_MEMORY``, stays the word)."""
    hint = _HINTS[option.name]
    if _repeated(option):
        return get_args(hint)[0]
    kinds = set(get_args(hint) or (hint,)) - {type(None)}
    return kinds.pop() if len(kinds) == 1 else str


def _flag(option: Field[Any]) -> str:
    """The option's spelling on the grading process's command line: ``--grader-<field>``, or
    ``--grader-no-<field>`` for a switch that is on by default."""
    name = option.name.replace("_", "-")
    return f"--grader-no-{name}" if option.default is True else f"--grader-{name}"


def _dest(option: Field[Any]) -> str:
    return f"grader_{option.name}"


def suite_arguments(suites: Path) -> list[str]:
    """How a pytest run of the grading suites in ``suites`` loads: the plugin and Hypothesis's
    (autoloading is off), no cache, and the suites' own ini file and root, never a project's."""
    return [
        "-p",
        "grader.grading.plugin",
        "-p",
        "hypothesis.extra.pytestplugin",
        "-p",
        "no:cacheprovider",
        "-c",
        str(suites / "grading.ini"),
        "--rootdir",
        str(suites),
    ]


def pytest_arguments(options: GradeOptions) -> list[str]:
    """``options`` as the grading process's command line: every field that is not None (left
    out, it is read back as None), its paths made absolute (the process runs in a directory of
    its own)."""
    arguments: list[str] = []
    for option in _FIELDS:
        value = getattr(options, option.name)
        if value is None or value is option.default and isinstance(value, bool):
            continue
        if isinstance(value, bool):
            arguments.append(_flag(option))
            continue
        for word in value if _repeated(option) else (value,):
            if isinstance(word, Path) or _kind(option) is Path:
                word = Path(word).resolve()
            arguments += [_flag(option), str(word)]
    return arguments


def add_pytest_options(group: pytest.OptionGroup) -> None:
    """Declare every field's ``--grader-<field>`` option as ``pytest_arguments`` writes it. One
    left out is the field's default, or None where the field may be None."""
    for option in _FIELDS:
        if isinstance(option.default, bool):
            group.addoption(
                _flag(option),
                dest=_dest(option),
                default=option.default,
                action="store_false" if option.default else "store_true",
            )
        elif _repeated(option):
            group.addoption(
                _flag(option),
                dest=_dest(option),
                action="append",
                type=_kind(option),
                default=command_line_default(option),
            )
        else:
            group.addoption(
                _flag(option),
                dest=_dest(option),
                type=_kind(option),
                default=None if _optional(option) or option.default is MISSING else option.default,
            )


def from_pytest(config: pytest.Config) -> GradeOptions | None:
    """The options the grading process was given, or None when it is no grading run (no
    ``--grader-submission``)."""
    if config.getoption("grader_submission", default=None) is None:
        return None
    return GradeOptions(
        **{option.name: as_field(config.getoption(_dest(option))) for option in _FIELDS}
    )
