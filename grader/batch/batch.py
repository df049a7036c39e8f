"""``python -m grader batch SUBMISSIONS --out DIR``: grade a whole class, in parallel, resumably.

Each upload in SUBMISSIONS (see ``grader.run.submissions``) is prepared and graded exactly as
``grade`` grades one folder, in its own trusted pytest processes and sandboxed workers, on
``-j`` lanes at once or on a Dask cluster (``--scheduler``). Results go into a ledger
(``DIR/ledger``, see ``grader.batch.ledger``) the moment each is known, so an interrupted
batch loses nothing finished and a rerun grades only what is new or changed (``--force``:
everything). A grading without a result for every selected item is a failure, never a score:
it is not stored, its row is an error, and the next run grades it again. A ledger entry's key
(``keys``) covers the grader's own source, the reference, the oracles and the library
versions as well as the upload, what the rubric grades, the seed and the selection, so a
changed grader regrades; the rubric's points only scale what the tests found, so a change to
them alone rescores the stored results (``scoring.rescored``) and runs no student code. Then
it writes ``grades.csv``, ``feedback/<student>.md`` and ``.html``, and ``summary.html``, and
compares the new ``grades.csv`` with the last run's (kept as ``previous/grades.csv``):
``changes.csv`` lists every student whose grade moved.

Every worker takes the first free uid slot from ``--slot`` (see
``grader.sandbox.launch.worker_in_free_slot``), so parallel lanes, concurrent batches and the
threads of a Dask worker never share a uid.

With ``--scheduler`` the uploads, the rubric and the reference must be visible at the same
paths on every Dask worker (a shared filesystem), and the workers must run the same grader
source and libraries (checked: a result from another grader is a failure).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import json
import os
import platform
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import numpy as np
from rich.console import Console

from grader import __version__
from grader.atomic import write_atomically
from grader.batch.lane import Lanes
from grader.batch.ledger import Key, Ledger
from grader.batch.progress import EVERY, BatchProgress, Tracker
from grader.grading import rubric as rubric_module
from grader.grading.completeness import unfinished
from grader.grading.scoring import rescored
from grader.layout import grader_digest
from grader.oracles import torch_oracle
from grader.report.document import GradeReport
from grader.report.formats import Change, StudentResult
from grader.report.formats.gradebook import changed_grades, changes_csv, gradebook_csv
from grader.report.formats.markdown import feedback
from grader.report.formats.summary import summary_html
from grader.report.html import write_html_report
from grader.report.view import points
from grader.run.api import (
    EXIT_GRADER,
    EXIT_OK,
    EXIT_USAGE,
    GradeOptions,
    Runner,
    UsageFailure,
    grade,
    selected_items,
)
from grader.run.arguments import (
    PUBLIC_SEED_WARNING,
    add_grading_options,
    batch_grade_options,
)
from grader.run.submissions import (
    DuplicateStudent,
    Upload,
    UploadLimits,
    as_handed_in,
    content_hash,
    discover,
    prepare,
)
from grader.run.trust import verify_reference

DEFAULT_SLOT = 100  # clear of the interactive ``grade`` (slots 0 and 1)
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class BatchOptions:
    """Everything a batch run needs; picklable, so Dask can ship it with each job."""

    submissions: Path
    out: Path
    grading: GradeOptions = GradeOptions(submission=Path(), slot=DEFAULT_SLOT)
    """How every upload is graded; ``submission`` is set to each prepared upload in turn."""
    jobs: int = os.cpu_count() or 1
    force: bool = False
    scheduler: str | None = None
    limits: UploadLimits = UploadLimits()
    every: int = EVERY
    """Uploads between two progress lines when the output is not a terminal."""


@dataclass(frozen=True)
class Job:
    """One upload to grade; runs locally or on a Dask worker."""

    upload: Upload
    key: Key
    options: BatchOptions


@dataclass
class BatchResult:
    """What a batch run did: every student's result and how each was obtained."""

    results: list[StudentResult] = field(default_factory=list)
    graded: int = 0
    reused: int = 0
    failed: int = 0
    rescored: int = 0
    """Of ``reused``, the grades stored at other points, rescored at the rubric's."""
    changes: list[Change] | None = None
    """The students whose grade moved since the last run's ``grades.csv`` (None: there was
    none, this is the first run)."""
    rubric_changes: str = ""
    """What moved in the rubric's points since the last run ("" where nothing did)."""


def grade_upload(job: Job, runner: Runner | None = None) -> dict[str, Any]:
    """Prepare and grade one upload; the ledger entry (JSON-able). Raises on grader failure."""
    grading = job.options.grading
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as tmp:
        graded = rubric_module.load(grading.rubric).profile.graded
        prepared = prepare(
            job.upload,
            Path(tmp) / "submission",
            graded,
            limits=job.options.limits,
            sandbox=grading.sandbox,
            slot=grading.slot,
        )
        report = grade(dataclasses.replace(grading, submission=prepared.folder), runner)
        report = as_handed_in(report, prepared, graded)
    return {
        "grader": grader_digest(),
        "libraries": list(libraries()),
        "version": __version__,
        "notes": prepared.notes,
        "refused": prepared.refused,
        "report": asdict(report),
    }


def _outcome(job: Job, future: Any) -> dict[str, Any]:
    """A finished job's entry, or ``{"error": ...}``; never raises. A result graded by another
    grader source or other libraries (a Dask worker not updated) is not the key's grade."""
    try:
        entry = future.result()
    except Exception as exc:  # noqa: BLE001 - one student's grader failure must not stop a class
        return {"error": f"{type(exc).__name__}: {exc}"[:500]}
    if entry.get("grader") != job.key.grader:
        return {
            "error": f"a worker runs another grader (source {str(entry.get('grader'))[:12]}, "
            f"not {job.key.grader[:12]})"
        }
    if tuple(entry.get("libraries", ())) != job.key.libraries:
        return {
            "error": f"a worker runs {', '.join(entry.get('libraries', ()))}, not "
            f"{', '.join(job.key.libraries)}"
        }
    return entry


def _local(jobs: list[Job], workers: int, tracker: Tracker) -> Iterator[tuple[Job, dict[str, Any]]]:
    """On this machine: ``workers`` submissions at once, each assignment's grading run a fork
    of a warm lane (``grader.batch.lane``), two lanes per submission; ``tracker`` hears
    when each starts."""
    pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="grade")

    def started(job: Job, lanes: Runner) -> dict[str, Any]:
        tracker.start(job.upload.student)
        return grade_upload(job, lanes)

    sandbox = jobs[0].options.grading.sandbox if jobs else "auto"  # one batch, one sandbox
    with Lanes(2 * max(1, workers) if jobs else 0, sandbox) as lanes:
        try:
            futures = {pool.submit(started, job, lanes): job for job in jobs}
            for future in as_completed(futures):
                yield futures[future], _outcome(futures[future], future)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def _dask(jobs: list[Job], address: str) -> Iterator[tuple[Job, dict[str, Any]]]:
    try:
        from dask.distributed import Client
        from dask.distributed import as_completed as dask_completed
    except ImportError:
        raise UsageFailure(
            "--scheduler needs Dask: pip install 'autograd-grader[cluster]'"
        ) from None
    with Client(address) as client:
        futures = {client.submit(grade_upload, job, pure=False): job for job in jobs}
        for future in dask_completed(futures):
            yield futures[future], _outcome(futures[future], future)


def libraries() -> tuple[str, ...]:
    """The versions that decide what Hypothesis draws for a seed (replay's keys have them too)."""
    return (
        f"hypothesis {hypothesis.__version__}",
        f"numpy {np.__version__}",
        f"python {platform.python_version()}",
    )


def reference_digest(grading: GradeOptions) -> str | None:
    """The reference folder's content, where a grade is given one (``api.pytest_command``):
    an edited solution changes the expected answers."""
    if grading.reference is None or not grading.reference.is_dir():
        return None
    return content_hash(Upload("reference", grading.reference, "folder"))


def oracles(grading: GradeOptions, reference: str | None) -> tuple[str, ...]:
    """The oracles a grade may ask besides finite differences, as ``oracles.chain`` picks them
    (without importing torch): which answers and which confirm decides verdicts."""
    chosen = ["reference"] if reference is not None else []
    if grading.torch and torch_oracle.available():
        try:
            chosen.append(f"pytorch {importlib.metadata.version('torch')}")
        except importlib.metadata.PackageNotFoundError:
            chosen.append("pytorch")
    return tuple(chosen)


def keys(
    options: BatchOptions, uploads: Iterable[Upload], rubric: rubric_module.Rubric
) -> dict[str, Key]:
    """Each student's ledger key: everything their grade depends on (``ledger.Key``)."""
    grading = options.grading
    reference = reference_digest(grading)
    shared = {
        "rubric": rubric.graded_digest,  # points only scale: stored grades are rescored
        "seed": grading.seed,
        "assignment": grading.assignment,
        "only": tuple(sorted(grading.only)),
        "grader": grader_digest(),
        "reference": reference,
        "oracles": oracles(grading, reference),
        "libraries": libraries(),
        "limits": (grading.import_budget, grading.memory_mb),
    }
    return {u.student: Key(content=content_hash(u), **shared) for u in uploads}


def run(options: BatchOptions, console: Console) -> BatchResult:
    """Grade what the ledger lacks, then write the class's files from the ledger."""
    rubric = rubric_module.load(options.grading.rubric)
    selected = selected_items(options.grading, rubric)
    if not options.submissions.is_dir():
        raise UsageFailure(f"no submissions folder {options.submissions}")
    verify_reference(options.grading, rubric)
    uploads, ignored = discover(options.submissions)
    if ignored:
        console.print(f"ignored (not a folder, .zip, .py or .ipynb): {', '.join(ignored)}")
    student_keys = keys(options, uploads, rubric)
    ledger = Ledger(options.out / "ledger")
    todo: dict[str, Job] = {}
    for upload in uploads:
        key = student_keys[upload.student]
        if options.force or _from_ledger(ledger, key, upload.student, rubric, selected) is None:
            todo.setdefault(key.digest, Job(upload, key, options))
    outcome = BatchResult(reused=len(uploads) - len(todo))
    errors: dict[str, str] = {}
    jobs = list(todo.values())
    with BatchProgress(console, len(uploads), outcome.reused, options.every) as progress:
        runner = (
            _dask(jobs, options.scheduler)
            if options.scheduler
            else _local(jobs, options.jobs, progress.tracker)
        )
        for job, entry in runner:
            error = entry.get("error") or _unfinished(entry, selected)
            if error:
                errors[job.key.digest] = error
                outcome.failed += 1
            else:
                ledger.put(job.key, entry)
                outcome.graded += 1
            report = entry.get("report")
            took = report.get("duration_s") if isinstance(report, dict) else None
            progress.finished(job.upload.student, bool(error), took)
    for upload in uploads:
        key = student_keys[upload.student]
        result = _from_ledger(ledger, key, upload.student, rubric, selected)
        outcome.rescored += result is not None and result.rescored
        outcome.results.append(
            result
            or StudentResult(upload.student, None, error=errors.get(key.digest, "not graded"))
        )
    outcome.changes = compare_with_last_run(options.out, outcome.results, rubric)
    outcome.rubric_changes = rubric_changes(_read_points(options.out), points_of(selected))
    write_outputs(
        options.out, outcome.results, rubric, selected, outcome.changes, outcome.rubric_changes
    )
    return outcome


def _unfinished(entry: dict[str, Any], selected: Sequence[rubric_module.Item]) -> str:
    """Why a grading's entry is not a grade of every selected item ("" when it is one): such
    an entry is a failure, never stored, so a rerun grades the upload again."""
    report = entry.get("report")
    items = report.get("items") if isinstance(report, dict) else None
    if not isinstance(items, list):
        return "unfinished grade: no item results"
    why = unfinished(items, selected)
    return f"unfinished grade: {why}" if why else ""


def _from_ledger(
    ledger: Ledger,
    key: Key,
    student: str,
    rubric: rubric_module.Rubric,
    selected: Sequence[rubric_module.Item],
) -> StudentResult | None:
    """The student's result from the ledger, scored at ``rubric``'s points (the key leaves
    them out: they only scale what the tests found), or None (also for an entry this version
    of the grader cannot read, or one without a result for every selected item: it is graded
    again)."""
    entry = ledger.get(key)
    if entry is None or _unfinished(entry, selected):
        return None
    try:
        report = GradeReport(**entry["report"])
        stored = report.results
    except (TypeError, KeyError):
        return None
    items = [rescored(r, rubric.by_id[r.id].points) if r.id in rubric.by_id else r for r in stored]
    report.items = [item.to_json() for item in items]
    return StudentResult(
        student,
        report,
        tuple(entry["notes"]),
        refused=str(entry.get("refused", "")),
        rescored=items != stored,
    )


POINTS = "points.json"
"""What each selected item was worth in the last run, and the maximum: a rerun names what
moved in the rubric."""


def points_of(selected: Sequence[rubric_module.Item]) -> dict[str, Any]:
    """The points of ``selected`` and their maximum (extra credit apart), as ``POINTS``."""
    return {
        "items": {item.id: item.points for item in selected},
        "max": sum(item.points for item in selected if not item.extra_credit),
    }


def _read_points(out: Path) -> dict[str, Any] | None:
    try:
        last = json.loads((out / POINTS).read_text())
    except (OSError, ValueError):
        return None
    return last if isinstance(last, dict) and isinstance(last.get("items"), dict) else None


def rubric_changes(last: dict[str, Any] | None, now: dict[str, Any]) -> str:
    """``rubric: micrograd.ops.tanh 6 → 8; max 200 → 202``: why grades moved when the
    instructor changed points ("" on a first run or where no point moved)."""
    if last is None:
        return ""
    old, new = last["items"], now["items"]
    moved = [
        f"{i} {points(old[i])} → {points(new[i])}" for i in new if i in old and old[i] != new[i]
    ]
    moved += [f"{i} added ({points(new[i])})" for i in new if i not in old]
    moved += [f"{i} removed" for i in old if i not in new]
    if last.get("max") != now["max"] and isinstance(last.get("max"), int | float):
        moved.append(f"max {points(last['max'])} → {points(now['max'])}")
    return "rubric: " + "; ".join(moved) if moved else ""


def compare_with_last_run(
    out: Path, results: list[StudentResult], rubric: rubric_module.Rubric
) -> list[Change] | None:
    """Keep the last run's ``grades.csv`` as ``previous/grades.csv`` and write ``changes.csv``:
    the students whose total or an item's score moved, which after a fixed grader are the ones
    to tell. None on a first run (no ``grades.csv`` yet). Called before the new ``grades.csv``
    is written; done again, it gives the same answer (an interrupted run loses nothing)."""
    try:
        last = (out / "grades.csv").read_text()
    except FileNotFoundError:
        return None
    write_atomically(out / "previous" / "grades.csv", last)
    changes = changed_grades(last, results, rubric.items)
    write_atomically(out / "changes.csv", changes_csv(changes))
    return changes


def write_outputs(
    out: Path,
    results: list[StudentResult],
    rubric: rubric_module.Rubric,
    selected: Sequence[rubric_module.Item],
    changes: list[Change] | None = None,
    rubric_changed: str = "",
) -> None:
    """``grades.csv``, ``feedback/<student>.md`` and ``.html`` per graded student (the same
    content as the terminal report), ``summary.html`` linking to them (and listing
    ``changes``, the grades that moved since the last run). A report lacking a result for a
    ``selected`` item is written as a grader error (``StudentResult.checked``). ``POINTS``
    last, once the rest is written."""
    results = [result.checked(selected) for result in results]
    write_atomically(out / "grades.csv", gradebook_csv(results, rubric.items))
    for result in results:
        if result.report is not None:
            write_atomically(
                out / "feedback" / f"{result.student}.md",
                feedback(result.report, rubric.titles, result.notes),
            )
            write_html_report(
                result.report,
                rubric.titles,
                out / "feedback" / f"{result.student}.html",
                result.notes,
            )
    write_atomically(
        out / "summary.html", summary_html(results, rubric.items, changes, rubric_changed)
    )
    write_atomically(out / POINTS, json.dumps(points_of(selected), indent=1))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "submissions", help="folder of uploads named by student id (folders, .zip, .py, .ipynb)"
    )
    parser.add_argument(
        "--out", required=True, help="folder for the ledger, grades.csv, feedback/ and summary.html"
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="submissions graded at once (default: the cores)",
    )
    add_grading_options(parser, slot=DEFAULT_SLOT)
    parser.add_argument("--force", action="store_true", help="regrade what the ledger has")
    parser.add_argument(
        "--progress-every",
        type=int,
        default=EVERY,
        metavar="N",
        help=f"not on a terminal: a progress line every N uploads (default {EVERY})",
    )
    parser.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786)")


def main(args: argparse.Namespace) -> int:
    console = Console(highlight=False, stderr=True)
    options = BatchOptions(  # absolute: a Dask worker grades in a directory of its own
        submissions=Path(args.submissions).absolute(),
        out=Path(args.out).absolute(),
        grading=batch_grade_options(args),
        jobs=args.jobs,
        force=args.force,
        scheduler=args.scheduler,
        every=args.progress_every,
    )
    if args.seed is None:
        console.print(PUBLIC_SEED_WARNING.format(flag="--seed N"), markup=False)
    try:
        outcome = run(options, console)
    except (UsageFailure, rubric_module.RubricError, DuplicateStudent) as exc:
        console.print(f"[red]usage error:[/red] {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        console.print(
            "[yellow]interrupted:[/yellow] every result finished so far is in the "
            "ledger; run the same command again to go on"
        )
        return EXIT_INTERRUPTED
    console.print(end_line(outcome, options.out / "grades.csv"), markup=False, soft_wrap=True)
    if outcome.rubric_changes:
        console.print(outcome.rubric_changes, markup=False, soft_wrap=True)
    if outcome.changes is not None:
        console.print(changes_line(outcome.changes, Path(args.out) / "changes.csv"), markup=False)
    return EXIT_GRADER if outcome.failed else EXIT_OK


def end_line(outcome: BatchResult, where: Path) -> str:
    """How the run went and every status it ended with: the zeros an upload or import problem
    caused are counted, not hidden among the graded."""
    statuses = Counter(result.status for result in outcome.results)
    rescored = f", {outcome.rescored} of them rescored" if outcome.rescored else ""
    return (
        f"{outcome.graded} graded, {outcome.reused} from the ledger{rescored}, "
        f"{outcome.failed} failed; {len(outcome.results)} students: "
        + ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
        + f"; wrote {where}"
    )


def changes_line(changes: list[Change], where: Path) -> str:
    """The terminal's word on what a rerun changed: an instructor must tell these students."""
    if not changes:
        return "no grade changed since the last run"
    return (
        f"{len(changes)} grade{'s' if len(changes) != 1 else ''} changed since the last "
        f"run ({where})"
    )
