"""``python -m grader grade``: grade one submission and report.

The submission is an upload as batch takes it (a folder, ``.py``, ``.ipynb`` or ``.zip``),
found and unpacked by ``grader.submissions`` into a private folder. An assignment that folder
lacks scores 0 here, item by item, without starting a worker for it.

Each assignment is graded by its own trusted pytest process (so both cores work), started with
plugin autoloading off, our own ini and rootdir, isolated mode (no current directory or user
site on ``sys.path``), in a private directory. The submission folder is never on its path.

Exit codes: 0 graded (whatever the score); 1 graded but below ``--fail-under``; 2 usage or
configuration error; 3 the grader itself failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from grader import rubric as rubric_module
from grader.atomic import write_atomically
from grader.formats.junit import junit_xml
from grader.formats.markdown import feedback
from grader.html_report import write_html_report
from grader.report import GradeReport, render
from grader.scoring import ItemResult
from grader.submissions import Upload, not_submitted, prepared, submitted, upload_at
from grader.worker.launch import Limits

PACKAGE = Path(__file__).resolve().parent
SUITES = PACKAGE / "suites"
DEFAULT_RUBRIC = PACKAGE.parent / "rubric.yaml"
DEFAULT_REFERENCE = PACKAGE.parent / "reference"
ASSIGNMENTS = ("micrograd", "babygrad")
EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_GRADER = 0, 1, 2, 3
SUBMISSION_HELP = ("a folder, .py, .ipynb or .zip, as a student uploads it; the engines are "
                   "found in it as batch finds them")


class GraderFailure(Exception):
    """The grader could not produce a grade (exit code 3)."""


class UsageFailure(Exception):
    """The command line or the configuration is wrong (exit code 2)."""


@dataclass(frozen=True)
class GradeOptions:
    """Everything that determines a grade, besides the submission's files."""

    submission: Path
    assignment: str = "all"
    seed: int | None = None
    only: tuple[str, ...] = ()
    rubric: Path = DEFAULT_RUBRIC
    reference: Path | None = DEFAULT_REFERENCE
    torch: bool = True
    """PyTorch may be an oracle where installed (``--no-torch``: grade as the student release
    does without it)."""
    sandbox: str = "auto"
    slot: int = 0
    memory_mb: int = Limits().memory_mb
    """The worker's address-space limit (Gradescope's container has 768 MB in all)."""


def pytest_command(assignment: str, options: GradeOptions, results: Path,
                   slot: int) -> list[str]:
    command = [
        sys.executable, "-I", "-m", "pytest", str(SUITES / f"test_{assignment}.py"),
        "-p", "grader.plugin", "-p", "hypothesis.extra.pytestplugin",
        "-p", "no:cacheprovider", "-c", str(SUITES / "grading.ini"),
        "--rootdir", str(SUITES), "--confcutdir", str(SUITES), "-q", "--no-header",
        "-o", "console_output_style=classic",
        "--grader-submission", str(Path(options.submission).resolve()),
        "--grader-rubric", str(Path(options.rubric).resolve()),
        "--grader-assignment", assignment, "--grader-results", str(results),
        "--grader-sandbox", options.sandbox, "--grader-slot", str(slot),
        "--grader-memory-mb", str(options.memory_mb),
    ]
    if options.seed is not None:
        command += ["--grader-seed", str(options.seed)]
    if not options.torch:
        command.append("--grader-no-torch")
    if options.reference is not None and options.reference.is_dir():
        command += ["--grader-reference", str(Path(options.reference).resolve())]
    for only in options.only:
        command += ["--grader-only", only]
    return command


def run_assignment(assignment: str, options: GradeOptions, workdir: Path, slot: int
                   ) -> dict[str, Any]:
    results = workdir / f"{assignment}.json"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1",
               PYTHONHASHSEED="0")
    env.pop("CI", None)  # Hypothesis would load its own CI profile
    proc = subprocess.run(pytest_command(assignment, options, results, slot), cwd=workdir,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode == 4:
        raise UsageFailure(_last_error(proc.stderr + proc.stdout))
    if proc.returncode not in (0, 1) or not results.is_file():
        raise GraderFailure(f"grading {assignment} failed (pytest exit {proc.returncode}): "
                            f"{_last_error(proc.stdout + proc.stderr)}")
    payload = json.loads(results.read_text())
    if payload["internal_errors"]:
        raise GraderFailure(f"grading {assignment} hit an internal error: "
                            f"{payload['internal_errors'][0]}")
    return payload


def _last_error(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or "error" in line]
    return (errors or lines or ["no output"])[-1][:500]


def grade(options: GradeOptions) -> GradeReport:
    """Grade the selected assignments in parallel; the results files are ours alone."""
    assignments = ASSIGNMENTS if options.assignment == "all" else (options.assignment,)
    rubric = rubric_module.load(options.rubric)
    selected = [a for a in assignments if any(
        i.assignment == a and rubric_module.selected(i.id, options.only) for i in rubric.items)]
    if not selected:
        raise UsageFailure(f"--only {' '.join(options.only)} selects no rubric item")
    absent = {a: not_submitted(a) for a in selected if not submitted(options.submission, a)}
    present = [a for a in selected if a not in absent]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="grader-") as tmp, ThreadPoolExecutor(2) as pool:
        futures = {a: pool.submit(run_assignment, a, options, Path(tmp), options.slot + n)
                   for n, a in enumerate(present)}
        payloads = {a: f.result() for a, f in futures.items()}
    first = next(iter(payloads.values()), {"oracles": [], "protections": []})
    notice = oracle_notice(first["oracles"], options.torch) if payloads else None
    return GradeReport(
        assignment=options.assignment,
        seed="secret" if options.seed is not None else rubric.seed,
        items=[item for a in selected for item in (
            payloads[a]["items"] if a in payloads else _absent_items(rubric, a, options.only))],
        oracles=first["oracles"],
        protections=first["protections"],
        duration_s=time.monotonic() - started,
        notices=[notice] if notice else [],
        checks=sum(payload["checks"] for payload in payloads.values()),
        not_submitted=absent,
    )


def _absent_items(rubric: rubric_module.Rubric, assignment: str, only: tuple[str, ...]
                  ) -> list[dict[str, Any]]:
    """The selected items of an assignment that was not submitted: 0 points, ``missing``,
    decided here without starting a worker."""
    why = not_submitted(assignment)
    return [ItemResult(id=i.id, assignment=assignment, title=i.title, score=0.0,
                       max_score=i.points, extra_credit=i.extra_credit,
                       visibility=i.visibility, status="missing", bugs=[], feedback=why,
                       reason=why).to_json()
            for i in rubric.for_assignments({assignment}) if rubric_module.selected(i.id, only)]


def oracle_notice(oracles: list[str], torch_allowed: bool) -> str | None:
    """One line when PyTorch is not among the oracles, saying what the grade rests on."""
    if "pytorch" in oracles:
        return None
    why = "PyTorch is not installed" if torch_allowed else "PyTorch is turned off (--no-torch)"
    if len(oracles) == 1:
        return (f"{why} and there is no reference solution: graded on a single oracle, "
                f"{oracles[0]}, with no second oracle to confirm a verdict.")
    return f"{why}: checking against {' and '.join(oracles)} only."


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
    parser.add_argument("--sandbox", choices=["auto", "bwrap", "none"], default="auto")
    parser.add_argument("--slot", type=int, default=slot, help=argparse.SUPPRESS)


def grade_options(args: argparse.Namespace, submission: Path) -> GradeOptions:
    return GradeOptions(
        submission=submission, assignment=args.assignment, seed=args.seed,
        only=tuple(args.only), rubric=Path(args.rubric),
        reference=Path(args.reference) if args.reference else None, torch=not args.no_torch,
        sandbox=args.sandbox,
        slot=args.slot)


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


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="python -m grader", description=__doc__.split("\n")[0])
    commands = main.add_subparsers(dest="command", required=True)
    g = commands.add_parser("grade", help="grade one submission")
    g.add_argument("--submission", required=True, help=SUBMISSION_HELP)
    add_grading_options(g)
    g.add_argument("--json", help="write the result as JSON here")
    g.add_argument("--junit", help="write JUnit XML here (one test case per rubric item)")
    g.add_argument("--markdown", help="write the report as Markdown here")
    g.add_argument("--html", help="write a self-contained HTML report (with pictures) here")
    g.add_argument("--fail-under", type=float, help="exit 1 when the score is below PCT%%")
    from grader import batch  # imports this module: only once it is complete

    batch.add_arguments(commands.add_parser("batch", help="grade a folder of submissions"))
    from grader import watch  # imports this module: only once it is complete

    watch.add_arguments(commands.add_parser("watch", help="re-grade on every save"))
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "batch":
        from grader import batch

        return batch.main(args)
    if args.command == "watch":
        from grader import watch

        return watch.main(args)
    console = Console(highlight=False)
    upload = submission_upload(args.submission, console)
    if upload is None:
        return EXIT_USAGE
    options = grade_options(args, upload.path)
    return exit_code(console, lambda: _grade_and_report(upload, options, args, console))


def submission_upload(submission: str, console: Console) -> Upload | None:
    """``--submission`` as an upload, or None after saying why it is not one."""
    upload = upload_at(Path(submission).resolve())
    if upload is None:
        console.print(f"[red]usage error:[/red] no submission {submission} (a folder, .py, "
                      ".ipynb or .zip)")
    return upload


def _grade_and_report(upload: Upload, options: GradeOptions, args: argparse.Namespace,
                      console: Console) -> int:
    with prepared(upload, sandbox=options.sandbox, slot=options.slot) as found:
        report = grade(dataclasses.replace(options, submission=found.folder))
    titles = rubric_module.load(options.rubric).titles
    render(report, titles, console, found.notes)
    if args.json:
        write_atomically(Path(args.json), json.dumps(report.to_json(), indent=2))
    if args.junit:
        write_atomically(Path(args.junit), junit_xml(report))
    if args.markdown:
        write_atomically(Path(args.markdown), feedback(report, titles, found.notes))
    if args.html:
        write_html_report(report, titles, Path(args.html), found.notes)
    if args.fail_under is not None and report.score < args.fail_under / 100 * (
            report.max_score or 1):
        console.print(f"score below --fail-under {args.fail_under}%")
        return EXIT_BELOW
    return EXIT_OK
