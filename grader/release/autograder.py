"""Inside Gradescope's container: grade ``submission/`` and write ``results/results.json``.

``run_autograder`` starts this with ``AUTOGRADER_ROOT`` (default ``/autograder``). The course
(its rubric, reference and profile) is the one ``setup.sh`` installed with the package, named in
``source/gradescope.json`` with the secret seed; this trusted process alone reads them, and the
student's code runs in the sandboxed worker, which sees neither. Results are written last,
atomically, replacing anything a submission may have put there. An autograder that cannot
find its course is the instructor's to fix: the student reads one line, the instructor the
details in the autograder's output.

Gradescope's own timeout (10 minutes by default) would give 0 with no results at all, so
grading has a deadline of its own (``deadline_s`` in ``gradescope.json``, default 480 s):
past it, every item is reported with 0 and the reason, and every grading process is ended.

Every container grades once, so no grade of it could replay an earlier one's examples
(``grader.grading.replay``): ``setup.sh`` records the reference's runs at the secret seed when
it builds the image (``--record``), into ``source/`` (root's alone, as the seed), and each
submission's grade replays them instead of drawing the same examples again. Replay gives the
verdicts of a grade without it; a correct engine's grade takes about half the time.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from grader.atomic import write_atomically
from grader.grading import rubric as rubric_module
from grader.layout import THIS_COURSE, course_root
from grader.report.document import GradeReport
from grader.report.formats.gradescope import misconfigured, results
from grader.run.api import GradeOptions, GraderFailure, UsageFailure, grade
from grader.run.submissions import Upload, as_handed_in, prepare, upload_at
from grader.run.trust import ReferenceFailure, verify_reference

DEFAULT_DEADLINE_S = 480.0
RECORDINGS = "recordings"
"""The folder of ``source/`` that holds the reference's recorded runs (``--record``)."""
GRADESCOPE_MEMORY_MB = 512
"""Each worker's address-space limit: two workers and two grading processes share the default
768 MB container, and numpy with one OpenBLAS thread runs in 512 MB."""


def _grade_within(options: GradeOptions, deadline_s: float) -> tuple[GradeReport | None, str, bool]:
    """The report or None and why not, and whether grading finished within ``deadline_s``."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["report"] = grade(options)
        except (GraderFailure, UsageFailure) as exc:
            outcome["failure"] = str(exc)

    thread = threading.Thread(target=work, daemon=True)  # never keeps the process alive
    thread.start()
    thread.join(deadline_s)
    if thread.is_alive():
        return None, f"grading did not finish within {deadline_s:g} s", False
    return outcome.get("report"), outcome.get("failure", ""), True


def _abandon() -> None:
    """End every grading process (they are in our process group) and exit at once."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(0, signal.SIGTERM)
    os._exit(0)


def _options(source: Path, config: dict[str, Any]) -> GradeOptions:
    """How this image grades: its course, the secret seed, its memory limit, its recordings.
    The recording and every grade share them, so what is recorded is what a grade replays."""
    course = course_root(config.get("course", THIS_COURSE))
    recordings = source / RECORDINGS
    return GradeOptions(
        submission=Path(),
        seed=config.get("seed"),
        memory_mb=int(config.get("memory_mb", GRADESCOPE_MEMORY_MB)),
        rubric=course / "rubric.yaml",
        reference=course / "reference",
        replay=recordings if recordings.is_dir() else None,
    )


def _reference(options: GradeOptions) -> Path:
    return Path(options.reference or "")


def record(source: Path, config: dict[str, Any]) -> None:
    """Grade the course's reference as a submission is graded, recording its runs in
    ``source/recordings`` for every submission's grade to replay."""
    (source / RECORDINGS).mkdir(exist_ok=True)
    options = _options(source, config)
    rubric = rubric_module.load(options.rubric)
    with tempfile.TemporaryDirectory(prefix="grader-gradescope-") as tmp:
        upload = Upload("reference", _reference(options), "folder")
        found = prepare(upload, Path(tmp) / "reference", rubric.profile.graded)
        grade(dataclasses.replace(options, submission=found.folder))


def _submission(root: Path) -> Upload:
    """``submission/`` as an upload: Gradescope unpacks a zip handed in, and a zip alone there
    (one it did not unpack: cut short on its way up, say) is the upload, read as ``grade``
    reads one, so that its feedback says it could not be read rather than that every
    assignment was not submitted."""
    folder = root / "submission"
    return upload_at(folder, "submission") or Upload("submission", folder, "folder")


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    os.setpgrp()  # our own process group: past the deadline, one signal ends all of grading
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    source = root / "source"
    config_path = source / "gradescope.json"
    config = json.loads(config_path.read_text()) if config_path.is_file() else {}
    if (sys.argv[1:] if argv is None else argv) == ["--record"]:
        record(source, config)
        return 0
    options = _options(source, config)
    try:
        rubric = rubric_module.load(options.rubric)
        if not _reference(options).is_dir():
            raise rubric_module.RubricError(f"{_reference(options)}: no reference solution")
        verify_reference(options, rubric)  # setup.sh checked it: a cached answer
    except (rubric_module.RubricError, ReferenceFailure) as exc:
        print(f"autograder misconfigured (rebuild the zip with `make gradescope`): {exc}")
        document = misconfigured(time.monotonic() - started)
        write_atomically(root / "results" / "results.json", json.dumps(document, indent=1))
        return 1
    with tempfile.TemporaryDirectory(prefix="grader-gradescope-") as tmp:
        prepared = prepare(_submission(root), Path(tmp) / "submission", rubric.profile.graded)
        report, failure, finished = _grade_within(
            dataclasses.replace(options, submission=prepared.folder),
            float(config.get("deadline_s", DEFAULT_DEADLINE_S)),
        )
        if report is not None:
            report = as_handed_in(report, prepared, rubric.profile.graded)
        document = results(
            rubric.items, report, time.monotonic() - started, prepared.notes, failure
        )
        write_atomically(root / "results" / "results.json", json.dumps(document, indent=1))
        if report is not None:  # for the instructor: Gradescope hides stdout from students
            print("protections: " + "; ".join(report.protections))
        if not finished:
            _abandon()
    return 0


if __name__ == "__main__":
    sys.exit(main())
