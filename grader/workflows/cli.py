"""``python -m grader``: the command line (grade, batch, watch, audit); the grading itself is
``grader.run.api``.

``grade`` takes an upload as batch takes it (a folder, ``.py``, ``.ipynb`` or ``.zip``), found
and unpacked by ``grader.run.submissions`` into a private folder, and writes the reports
asked for.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
from pathlib import Path

from rich.console import Console

from grader.atomic import write_atomically
from grader.grading import rubric as rubric_module
from grader.report.document import render
from grader.run.api import (
    EXIT_BELOW,
    EXIT_OK,
    EXIT_USAGE,
    GradeOptions,
    grade,
    selected_assignments,
)
from grader.run.arguments import (
    SUBMISSION_HELP,
    add_grading_options,
    exit_code,
    grade_options,
    submission_upload,
)
from grader.run.submissions import Upload, as_handed_in, prepared
from grader.run.trust import verify_reference


def program_name() -> str:
    """The command as it was called: ``autograd-grader`` (the console script an install
    puts on PATH) or ``python -m grader``."""
    called = Path(sys.argv[0]).name
    return "python -m grader" if called == "__main__.py" else called


COMMANDS = {
    "batch": ("grader.batch.batch", "grade a folder of submissions"),
    "watch": ("grader.workflows.watch", "re-grade on every save"),
    "audit": ("grader.audit.audit", "how strong is the rubric? grade mutants of the reference"),
}
"""The commands with a module of their own, imported only when called: a grade pays for no
audit, batch or watch machinery."""


DESCRIPTION = (
    "Grade a hand-written autograd engine against a course's rubric: its code runs in a "
    "sandbox, on random expression graphs checked against the course's oracles."
)
"""What ``--help`` says first: a whole sentence (the module's docstring is for readers of the
code)."""


def parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The command line; only ``chosen``'s own module (``COMMANDS``) is imported to spell its
    options (every one where ``chosen`` is None)."""
    main = argparse.ArgumentParser(prog=program_name(), description=DESCRIPTION)
    commands = main.add_subparsers(dest="command", required=True)
    g = commands.add_parser("grade", help="grade one submission")
    g.add_argument("--submission", required=True, help=SUBMISSION_HELP)
    add_grading_options(g)
    g.add_argument("--json", help="write the result as JSON here")
    g.add_argument("--junit", help="write JUnit XML here (one test case per rubric item)")
    g.add_argument("--markdown", help="write the report as Markdown here")
    g.add_argument("--html", help="write a self-contained HTML report (with pictures) here")
    g.add_argument("--fail-under", type=float, help="exit 1 when the score is below PCT%%")
    check = commands.add_parser(
        "check-reference",
        help="grade a course's reference on its own rubric, without itself as an oracle "
        "(every grade does this first, once per change)",
    )
    add_grading_options(check)
    for name, (module, summary) in COMMANDS.items():
        command = commands.add_parser(name, help=summary)
        if chosen in (None, name):
            importlib.import_module(module).add_arguments(command)
    return main


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    chosen = next((word for word in words if not word.startswith("-")), "")
    args = parser(chosen).parse_args(argv)
    if args.command in COMMANDS:
        return importlib.import_module(COMMANDS[args.command][0]).main(args)
    console = Console(highlight=False)
    if args.command == "check-reference":
        return exit_code(console, lambda: _check_reference(grade_options(args, Path())))
    upload = submission_upload(args.submission, console)
    if upload is None:
        return EXIT_USAGE
    options = grade_options(args, upload.path)
    return exit_code(console, lambda: _grade_and_report(upload, options, args, console))


def _check_reference(options: GradeOptions) -> int:
    verify_reference(options, rubric_module.load(options.rubric))
    print(f"the reference {options.reference} earns every point of {options.rubric}")
    return EXIT_OK


def _grade_and_report(
    upload: Upload, options: GradeOptions, args: argparse.Namespace, console: Console
) -> int:
    rubric = rubric_module.load(options.rubric)
    verify_reference(options, rubric)
    # only what is graded is looked for: no note on a babygrad/ a micrograd grade ignores
    course = selected_assignments(options, rubric)
    with prepared(upload, course, sandbox=options.sandbox, slot=options.slot) as found:
        report = grade(dataclasses.replace(options, submission=found.folder))
        report = as_handed_in(report, found, course)
    titles = rubric.titles
    render(report, titles, console, found.notes)
    if args.json:
        write_atomically(Path(args.json), json.dumps(report.to_json(), indent=2))
    if args.junit:
        from grader.report.formats.junit import junit_xml  # only when asked: see COMMANDS

        write_atomically(Path(args.junit), junit_xml(report))
    if args.markdown:
        from grader.report.formats.markdown import feedback

        write_atomically(Path(args.markdown), feedback(report, titles, found.notes))
    if args.html:
        from grader.report.html import write_html_report

        write_html_report(report, titles, Path(args.html), found.notes)
    if args.fail_under is not None and report.score < args.fail_under / 100 * (
        report.max_score or 1
    ):
        console.print(f"score below --fail-under {args.fail_under}%")
        return EXIT_BELOW
    return EXIT_OK
