"""The command-line options every grading command shares (grade, batch, watch), and how a
command turns a failure into its exit code and one line."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from rich.console import Console

from grader.grading import rubric as rubric_module
from grader.grading.options import (
    IN_MEMORY,
    SPELLING,
    GradeOptions,
    as_field,
    command_line_default,
)
from grader.layout import (
    DEFAULT_REFERENCE,
    DEFAULT_RUBRIC,
    REPLAY_CACHE,
    THIS_COURSE,
    course_root,
    shipped_courses,
)
from grader.run.api import EXIT_GRADER, EXIT_USAGE, GraderFailure, UsageFailure
from grader.run.submissions import Upload, upload_at

SUBMISSION_HELP = (
    "a folder, .py, .ipynb or .zip, as a student uploads it; the engines are "
    "found in it as batch finds them"
)
PUBLIC_SEED_WARNING = (
    "warning: no secret seed given, so these grades use the rubric's public seed (its "
    "`seed:`), which students can read and so know every graph drawn; give {flag}, a number "
    "of your own kept from students, for grades of record"
)
"""What batch and the Gradescope image say when no secret seed is given (``{flag}``: how the
command takes one)."""
_SPELLED = [option for option in fields(GradeOptions) if SPELLING in option.metadata]
"""The fields a grading command takes from its command line."""


def add_grading_options(parser: argparse.ArgumentParser, slot: int = 0) -> None:
    """The options that decide a grade, the same for grade, batch and watch: each field of
    ``GradeOptions`` with a command-line spelling, and ``--no-replay``."""
    for option in _SPELLED:
        flag, spelling = option.metadata[SPELLING]
        parser.add_argument(
            flag, dest=option.name, default=command_line_default(option), **spelling
        )
    parser.add_argument(
        "--course",
        type=course,
        default=THIS_COURSE,
        metavar="NAME|FOLDER",
        help="grade an engine written for another course's API: a shipped course "
        f"({', '.join(shipped_courses())}) or the folder of a course of your own "
        "(profile.yaml, rubric.yaml, reference/); the default is this course's",
    )
    parser.add_argument(
        "--no-replay",
        action="store_true",
        help="run every test under Hypothesis instead of replaying the runs "
        "recorded before (a secret --seed never replays)",
    )
    parser.set_defaults(slot=slot)


def course(name: str) -> str:
    """``--course``: a shipped course's name, or a folder that holds a course's rubric."""
    if name in shipped_courses() or (course_root(name) / "rubric.yaml").is_file():
        return name
    raise argparse.ArgumentTypeError(
        f"no course {name!r}: name one of {', '.join(shipped_courses())}, or give the folder "
        "of a course of your own (profile.yaml, rubric.yaml, reference/)"
    )


def grade_options(args: argparse.Namespace, submission: Path) -> GradeOptions:
    """The grading options the command line gives. ``--course NAME`` stands for that course's
    rubric and reference, where ``--rubric`` and ``--reference`` are not given."""
    given = {option.name: as_field(getattr(args, option.name)) for option in _SPELLED}
    root = course_root(getattr(args, "course", THIS_COURSE))
    if given["rubric"] == DEFAULT_RUBRIC:
        given["rubric"] = root / "rubric.yaml"
    if given["reference"] == DEFAULT_REFERENCE:
        given["reference"] = root / "reference"
    return GradeOptions(
        submission=submission,
        replay=None if args.no_replay or args.seed is not None else REPLAY_CACHE,
        **given,
    )


def batch_grade_options(args: argparse.Namespace) -> GradeOptions:
    """The grading options of a command that grades many uploads in lanes (batch, audit):
    absolute paths, since a Dask worker grades in a directory of its own, and examples replayed
    from the lanes' memory unless ``--no-replay`` or a Dask ``--scheduler`` says otherwise."""
    grading = grade_options(args, Path())
    local = not (args.no_replay or getattr(args, "scheduler", None))
    return dataclasses.replace(
        grading,
        rubric=grading.rubric.absolute(),
        reference=grading.reference.absolute() if grading.reference else None,
        replay=IN_MEMORY if local else None,
    )


def exit_code(console: Console, action: Callable[[], int]) -> int:
    """Run ``action``; a configuration problem exits 2 and a grader failure 3, each said in one
    line rather than a traceback."""
    try:
        return action()
    except (UsageFailure, rubric_module.RubricError) as exc:
        console.print(f"[red]configuration error:[/red] {exc}")
        return EXIT_USAGE
    except GraderFailure as exc:
        console.print(f"[red]grader failure (not your fault):[/red] {exc}")
        return EXIT_GRADER


def submission_upload(submission: str, console: Console) -> Upload | None:
    """``--submission`` as an upload, or None after saying why it is not one."""
    upload = upload_at(Path(submission).resolve())
    if upload is None:
        console.print(
            f"[red]usage error:[/red] no submission {submission} (a folder, .py, .ipynb or .zip)"
        )
    return upload
