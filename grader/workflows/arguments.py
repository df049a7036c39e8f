"""The command-line options every grading command shares (grade, batch, watch), and how a
command turns a failure into its exit code and one line."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from grader.grading import rubric as rubric_module
from grader.layout import DEFAULT_REFERENCE, DEFAULT_RUBRIC, REPLAY_CACHE
from grader.worker.sandbox import MODES
from grader.workflows.api import (
    ASSIGNMENTS,
    EXIT_GRADER,
    EXIT_USAGE,
    GradeOptions,
    GraderFailure,
    UsageFailure,
)
from grader.workflows.submissions import Upload, upload_at

SUBMISSION_HELP = ("a folder, .py, .ipynb or .zip, as a student uploads it; the engines are "
                   "found in it as batch finds them")


def add_grading_options(parser: argparse.ArgumentParser, slot: int = 0) -> None:
    """The options that decide a grade, the same for grade, batch and watch."""
    parser.add_argument("--assignment", choices=[*ASSIGNMENTS, "all"], default="all")
    parser.add_argument("--seed", type=int, help="secret grading seed (never shown to students)")
    parser.add_argument("--only", action="append", default=[],
                        help="grade only this item or id prefix (repeatable)")
    parser.add_argument("--rubric", default=str(DEFAULT_RUBRIC))
    parser.add_argument("--reference", default=str(DEFAULT_REFERENCE),
                        help="reference solutions, used as an oracle when present")
    parser.add_argument("--no-torch", action="store_true",
                        help="never use PyTorch as an oracle, even where it is installed")
    parser.add_argument("--sandbox", choices=MODES, default="auto")
    parser.add_argument("--no-replay", action="store_true",
                        help="run every test under Hypothesis instead of replaying the runs "
                             "recorded before (a secret --seed never replays)")
    parser.add_argument("--slot", type=int, default=slot, help=argparse.SUPPRESS)


def grade_options(args: argparse.Namespace, submission: Path) -> GradeOptions:
    return GradeOptions(
        submission=submission, assignment=args.assignment, seed=args.seed,
        only=tuple(args.only), rubric=Path(args.rubric),
        reference=Path(args.reference) if args.reference else None, torch=not args.no_torch,
        sandbox=args.sandbox, slot=args.slot,
        replay=None if args.no_replay or args.seed is not None else REPLAY_CACHE)


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
        console.print(f"[red]usage error:[/red] no submission {submission} (a folder, .py, "
                      ".ipynb or .zip)")
    return upload


