"""Every planted bug of a course, killed at every seed: the proof behind "by construction, not
by luck" (issue 32), too long for ``make test`` (which grades a seeded sample of it:
``tests/test_coverage.py``).

Each bug is planted in a copy of its course's reference (``tests.planted``); the copies and the
reference itself are graded as one batch per seed (``python -m grader batch``, as an
instructor grades a class). At every seed the reference must keep full marks, and each bug
must cost its own item, with nothing else lost but the course's whole-graph items; and every
upload's grade (its total and each item's score) must be the same at every seed. Prints one
line per seed and every survivor or leak, then every grade that moved; exits 1 if there is
one.

    python -m tests.seed_sweep --course course --seeds 1-20 -j 2

With ``--mutants AUDIT``, the same for the mutants an audit killed (``python -m grader audit
--out AUDIT``, at the rubric's seed), from the audit's own uploads (``AUDIT/mutants/``): each
region's killed mutants (those whose region serves the same items) and the reference are graded
on those items but the whole graph's, as a batch grades, in warm lanes this process keeps, and
every killed mutant must still cost an item of its region at every seed (``--sample N``: a
seeded sample of them, the same at every seed).

    python -m tests.seed_sweep --mutants audit --sample 60 --seeds 1-20 -j 2
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from grader import layout
from grader.batch.batch import DEFAULT_SLOT
from grader.batch.lane import Lanes
from grader.grading import rubric as rubric_module
from grader.grading.options import IN_MEMORY, GradeOptions
from grader.grading.rubric import selected
from grader.report.document import GradeReport
from grader.run.api import GraderFailure, UsageFailure, grade
from tests.planted import CATALOGUE, Bug, course_bugs, plant

ENGINES = Path(__file__).resolve().parent / "engines"
REFERENCE_UPLOAD = "reference"


def bugs_of(course: str) -> tuple[Bug, ...]:
    """The course's planted bugs: this course's catalogue, another's ``planted.yaml``."""
    if course == "course":
        return tuple(CATALOGUE.values())
    return course_bugs(ENGINES / course / "planted.yaml")


def upload_name(bug: Bug) -> str:
    return bug.label.replace(":", "--").replace(".", "-")


def uploads(course: str, folder: Path, only: tuple[str, ...] = ()) -> dict[str, Bug]:
    """The reference and one copy of it per planted bug (of the items ``only`` selects), in
    ``folder``, by upload name."""
    reference = layout.course_root(course) / "reference"
    plant(folder / REFERENCE_UPLOAD, reference=reference)
    planted = {}
    for bug in (b for b in bugs_of(course) if selected(b.item, only)):
        plant(folder / upload_name(bug), bug, reference=reference)
        planted[upload_name(bug)] = bug
    return planted


def graded(
    course: str, folder: Path, out: Path, seed: int, jobs: int, *chosen: str
) -> dict[str, dict]:
    """``grades.csv`` of one batch at ``seed``, by upload (``chosen``: more of ``grader
    batch``'s arguments), graded ``--verdicts-only``: every score and status of a full grade,
    without shrinking a counterexample or running it afresh, which only the feedback needs."""
    run = subprocess.run(
        [sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out)]
        + ["--course", course, "--seed", str(seed), "-j", str(jobs), "--force"]
        + ["--verdicts-only", *chosen],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        raise SystemExit(f"the batch at seed {seed} failed:\n{run.stdout}{run.stderr}")
    with (out / "grades.csv").open() as rows:
        return {row["student"]: row for row in csv.DictReader(rows)}


def short_of_full(reference: dict[str, str]) -> list[str]:
    """The reference's row, if it is short of full marks (extra credit may take it above)."""
    short = float(reference["total"] or 0) < float(reference["max"])
    return [f"reference: {reference['total']} of {reference['max']}"] * short


def verdicts(
    rows: dict[str, dict], planted: dict[str, Bug], points: Mapping[str, float]
) -> list[str]:
    """What is wrong at one seed: the reference short of full marks, a bug its item does not
    notice (a survivor), an item other than its own and the whole graph that it costs (a
    leak), an upload not graded. An item is judged against the reference's score, or, where
    the reference's edition has no such item (a blank cell), against its ``points``: a bug
    planted in another edition (Karpathy's lecture has tanh, its repository relu) is judged in
    its own, and an item its edition leaves out (blank) is one it cannot cost."""
    reference = rows[REFERENCE_UPLOAD]
    items = [c for c in reference if "." in c]

    def full(item: str) -> float | None:
        cell = reference.get(item, "")
        return float(cell) if cell != "" else points.get(item)

    def costs(row: dict, item: str) -> bool:
        expected = full(item)
        return row.get(item, "") != "" and expected is not None and float(row[item]) < expected

    wrong = short_of_full(reference)
    for name, bug in planted.items():
        row = rows.get(name)
        if row is None or row["total"] == "":
            wrong.append(f"{bug.label}: not graded ({row and row['notes']})")
            continue
        if not costs(row, bug.item):
            wrong.append(f"{bug.label}: survives")
        leaks = [i for i in items if i != bug.item and not i.endswith(".graphs") and costs(row, i)]
        wrong += [f"{bug.label}: also costs {i}" for i in leaks]
    return wrong


def moved(by_seed: dict[int, dict[str, dict]]) -> list[str]:
    """Each upload whose grade is not the same at every seed (its total and every item's
    score): what a bug costs must not depend on the seed an instructor picks. One line each,
    with the totals by seed and the items that moved."""
    rows = list(by_seed.values())
    lines = []
    for name in rows[0]:
        items = [c for c in rows[0][name] if "." in c or c == "total"]
        if all(all(r[name].get(c) == rows[0][name].get(c) for c in items) for r in rows[1:]):
            continue
        varied = [c for c in items if c != "total" and len({r[name].get(c) for r in rows}) > 1]
        totals = ", ".join(f"{seed}: {r[name]['total']}" for seed, r in by_seed.items())
        lines.append(f"{name}: moves with the seed ({totals}) on {', '.join(varied)}")
    return lines


def killed(
    audit: Path, count: int | None, only: tuple[str, ...] = ()
) -> dict[tuple[str, ...], list[dict]]:
    """The mutants ``audit`` killed (of a region with an item ``only`` selects; a sample of
    ``count`` of them, seeded), by the items of their region but the whole graph's (which a
    batch grades them on: the rest cannot notice them), each as ``audit.json`` gives it
    (``id``, ``own``: the items of its region)."""
    verdicts = json.loads((audit / "audit.json").read_text())["verdicts"]
    chosen = [
        v for v in verdicts if v["verdict"] == "killed" and any(selected(i, only) for i in v["own"])
    ]
    if count is not None and count < len(chosen):
        chosen = random.Random(0).sample(chosen, count)
    by_region: dict[tuple[str, ...], list[dict]] = {}
    for verdict in sorted(chosen, key=lambda v: v["id"]):
        items = tuple(sorted(i for i in verdict["own"] if not i.endswith(".graphs")))
        by_region.setdefault(items, []).append(verdict)
    return dict(sorted(by_region.items()))


def mutant_verdicts(rows: dict[str, dict], mutants: list[dict]) -> list[str]:
    """What is wrong at one seed: the reference short of full marks on an item graded, a
    killed mutant that costs none of its region's items (a survivor), one not graded."""
    reference = rows[REFERENCE_UPLOAD]
    graded_items = [c for c in reference if "." in c and reference[c] != ""]
    wrong = short_of_full(reference)
    for mutant in mutants:
        row = rows.get(mutant["id"])
        if row is None or row["total"] == "":
            wrong.append(f"{mutant['id']}: not graded ({row and row['notes']})")
        elif not any(row[i] != reference[i] for i in mutant["own"] if i in graded_items):
            wrong.append(f"{mutant['id']}: survives")
    return wrong


def report_row(report: GradeReport) -> dict[str, str]:
    """A grade as a row of ``grades.csv`` holds it: its total, its maximum, each item's score."""
    scores = {item["id"]: str(item["score"]) for item in report.items}
    return {"total": str(report.score), "max": str(report.max_score), **scores, "notes": ""}


def graded_row(options: GradeOptions, lanes: Lanes, uploads: Path, name: str) -> dict[str, str]:
    """The grade of the upload ``name`` in ``uploads`` as a row, or why there is none."""
    try:
        return report_row(grade(replace(options, submission=uploads / name), lanes))
    except (GraderFailure, UsageFailure) as exc:
        return {"total": "", "notes": str(exc)}


def mutant_sweep(options: argparse.Namespace) -> int:
    """``--mutants``: the audit's killed mutants, graded again at each seed (every region at
    one seed before the next seed: a sweep stopped early has covered whole seeds), each region's
    on its items alone, as a batch grades (warm lanes, replaying what the reference's grade
    recorded) but in this one process, which keeps its lanes from region to region."""
    chosen = killed(options.mutants, options.sample, tuple(options.only))
    total = sum(len(mutants) for mutants in chosen.values())
    print(f"{total} killed mutants in {len(chosen)} regions", flush=True)
    root = layout.course_root(options.course)
    base = GradeOptions(
        Path(),
        rubric=root / "rubric.yaml",
        reference=root / "reference",
        replay=IN_MEMORY,
        verdicts_only=True,
        slot=DEFAULT_SLOT,
    )
    failures = 0
    with Lanes(options.jobs) as lanes, ThreadPoolExecutor(options.jobs) as pool:
        for seed in options.seeds:
            wrong: list[str] = []
            for items, mutants in chosen.items():
                assignment = items[0].partition(".")[0]
                region = replace(base, assignment=assignment, only=items, seed=seed)
                row = functools.partial(
                    graded_row, region, lanes, options.mutants / "mutants" / assignment
                )
                rows = {REFERENCE_UPLOAD: row(REFERENCE_UPLOAD)}  # first: the others replay it
                names = [m["id"] for m in mutants]
                rows.update(zip(names, pool.map(row, names), strict=True))
                wrong += mutant_verdicts(rows, mutants)
            print(f"seed {seed}: {total - len(wrong)} of {total} killed", flush=True)
            for line in wrong:
                print(f"  {line}", flush=True)
            failures += len(wrong)
    return 1 if failures else 0


def seed_range(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.seed_sweep", description=__doc__)
    parser.add_argument("--course", default="course", help="a shipped course (default: this)")
    parser.add_argument("--seeds", type=seed_range, default=seed_range("1-20"))
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--mutants", type=Path, metavar="AUDIT", help="an audit's --out folder")
    parser.add_argument("--sample", type=int, help="with --mutants: this many, seeded")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="only the planted bugs of this item or id prefix, graded on it alone (with "
        "--mutants: the regions that serve it); repeatable",
    )
    options = parser.parse_args()
    if options.mutants is not None:
        return mutant_sweep(options)
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "uploads"
        planted = uploads(options.course, folder, tuple(options.only))
        print(f"{options.course}: {len(planted)} planted bugs and the reference", flush=True)
        only = [word for item in options.only for word in ("--only", item)]
        by_seed: dict[int, dict[str, dict]] = {}
        rubric = rubric_module.load(layout.course_root(options.course) / "rubric.yaml")
        points = {item.id: item.points for item in rubric.items}
        for seed in options.seeds:
            out = Path(scratch) / f"out{seed}"
            by_seed[seed] = graded(options.course, folder, out, seed, options.jobs, *only)
            wrong = verdicts(by_seed[seed], planted, points)
            missed = {line.partition(": ")[0] for line in wrong}
            print(f"seed {seed}: {len(planted) - len(missed)} of {len(planted)} right", flush=True)
            for line in wrong:
                print(f"  {line}", flush=True)
            failures += len(wrong)
        movers = moved(by_seed)
        print(f"{len(movers)} of {len(planted) + 1} uploads score differently across seeds")
        for line in movers:
            print(f"  {line}", flush=True)
    return 1 if failures or movers else 0


if __name__ == "__main__":
    sys.exit(main())
