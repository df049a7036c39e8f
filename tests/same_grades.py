"""Grades before and after a change to the grader: ``python -m tests.same_grades OUT`` grades
this course's reference and stubs, every planted pair of bugs (``planted.PAIRS``; ``--every N``:
every Nth pair, on a busy machine), and each
other course's reference and first planted bug with ``python -m grader grade --json``, and
writes each grade to ``OUT/<name>.json`` without what differs from run to run (durations, the
sandbox's uid in the protections). ``diff -r`` two such folders: a speed-up must leave them
identical. ``--all-planted``: every planted bug of the other courses, not only the first;
``--course NAME`` (repeatable): only those courses (``course`` is this one); ``-j N``: grades at
once.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.helpers import ENGINES
from tests.helpers.planted import PAIRS, REFERENCE, course_bugs, pair_label, plant

ROOT = REFERENCE.parent
VOLATILE = ("duration_s",)


def stripped(value: Any) -> Any:
    """``value`` without the keys whose values differ between two runs of one grade."""
    if isinstance(value, dict):
        return {k: stripped(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stripped(v) for v in value]
    return value


def engines(
    work: Path, every: int = 1, every_planted: bool = False, courses: tuple[str, ...] = ()
) -> list[tuple[str, Path, tuple[str, ...]]]:
    """(name, submission, extra arguments) of every engine graded (only ``courses``' if any)."""
    found: list[tuple[str, Path, tuple[str, ...]]] = []
    if not courses or "course" in courses:
        found += [("reference", REFERENCE, ()), ("stubs", ROOT / "exercises", ())]
        for n, pair in list(enumerate(PAIRS))[::every]:
            bugs = [b for b in pair if b is not None]
            found.append((pair_label(pair).replace("/", "_"), plant(work / f"pair{n}", *bugs), ()))
    for course in sorted((ROOT / "courses").glob("*/reference")):
        name = course.parent.name
        if courses and name not in courses:
            continue
        found.append((f"{name}-reference", course, ("--course", name)))
        catalogue = ENGINES / name / "planted.yaml"
        if catalogue.is_file():
            planted = course_bugs(catalogue)
            for n, bug in enumerate(planted if every_planted else planted[:1]):
                submission = plant(work / f"{name}{n}", bug, reference=course)
                label = f"{name}-{bug.item}-{bug.name}" if every_planted else f"{name}-{bug.name}"
                found.append((label.replace("/", "_"), submission, ("--course", name)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--all-planted", action="store_true")
    parser.add_argument("--course", action="append", default=[])
    parser.add_argument("-j", "--jobs", type=int, default=1)
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="same-grades-") as tmp:

        def graded(job: tuple[int, tuple[str, Path, tuple[str, ...]]]) -> None:
            index, (name, submission, extra) = job
            target = Path(tmp) / f"grade{index}.json"
            command = [sys.executable, "-m", "grader", "grade", "--submission", str(submission)]
            subprocess.run(
                [*command, *extra, "--no-replay", "--json", str(target)],
                stdout=subprocess.DEVNULL,
                check=False,
            )
            grade = json.loads(target.read_text()) if target.exists() else {"missing": True}
            (out / f"{name}.json").write_text(json.dumps(stripped(grade), indent=1) + "\n")
            target.unlink(missing_ok=True)
            print(name, flush=True)

        found = engines(Path(tmp), args.every, args.all_planted, tuple(args.course))
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(graded, enumerate(found)))


if __name__ == "__main__":
    main()
