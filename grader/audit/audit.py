"""``python -m grader audit``: how strong is this rubric? Mutants of the reference, graded.

Every solution region of ``reference/`` names the rubric items it serves (``# BEGIN SOLUTION
[serves; also]: ...``). The audit makes mutants of each region (``grader.audit.mutants``:
operators replaced, ``+=`` turned into ``=``, statements deleted, ...) and do-nothing variants
(the region's body replaced by the smallest one that runs), grades them all as a batch grades a
class (lanes, replay, ``-j``, ``--scheduler``), and judges each against the reference's grade:

- a mutant must lose points on an item of its own region, and on nothing else but its
  assignment's ``*.graphs`` item (otherwise: a blame ``leak``, or killed ``elsewhere``);
- a mutant no item kills is run against the reference in a much wider differential test
  (``grader.audit.differential``): ``differs`` is a hole in the rubric, shown with the
  program that tells them apart; otherwise it is ``equivalent`` (for a person to confirm in
  ``reference/audit-judgements.yaml``, with the reason);
- a do-nothing variant must earn nothing on the items its region serves (on an item several
  regions serve, such as ``micrograd.sugar``, it must cost points);
- a ``+=`` turned into ``=`` must be named ``overwrite-grad``, and no other mutant may be;
- a do-one-thing variant (the stubs with one region written, graded beside the stubs) must
  earn no more than its region's items allow (``judge_one_thing``).

It works on any course's ``reference/`` and ``rubric.yaml``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml
from rich.console import Console
from rich.progress import Progress

from grader.atomic import write_atomically
from grader.audit import coverage
from grader.audit.differential import ASSIGNMENTS as SPOKEN
from grader.audit.differential import differ
from grader.audit.mutants import (
    DO_NOTHING,
    SKIPPED,
    Mutant,
    Region,
    do_nothing,
    do_one_thing,
    mutants,
    operator_names,
    regions,
    sample,
    stub_files,
)
from grader.batch.batch import DEFAULT_SLOT, BatchOptions
from grader.batch.batch import run as run_batch
from grader.grading import rubric as rubric_module
from grader.report.document import GradeReport
from grader.report.formats.audit import (
    CONFIRMED,
    DIFFERS,
    DO_ONE_THING,
    EARNS_POINTS,
    ELSEWHERE,
    EQUIVALENT,
    ERROR,
    KILLED,
    LEAK,
    NOTHING_EARNED,
    OWN_SHARE,
    AuditReport,
    Verdict,
    audit_html,
    render,
)
from grader.run.api import EXIT_BELOW, EXIT_OK, EXIT_USAGE, GradeOptions, UsageFailure
from grader.run.arguments import add_grading_options, batch_grade_options
from grader.run.trust import verify_reference

BASELINE = "reference"
"""The upload name of the unchanged reference, graded beside the mutants as the baseline."""
STUBS = "stubs"
"""The upload name of the reference's stubs, graded beside the do-one-thing variants: what
they earn above it is what their one region earns."""
EPSILON = 1e-6
OVERWRITE_OPERATOR, OVERWRITE_BUG = "aug-assign-to-assign", "overwrite-grad"
JUDGEMENTS = "audit-judgements.yaml"
"""In the reference folder: what a person decided about some mutants (``Judgements``)."""


@dataclass(frozen=True)
class AuditOptions:
    """What to audit and how to grade it."""

    out: Path
    grading: GradeOptions = GradeOptions(submission=Path(), slot=DEFAULT_SLOT)
    """How each mutant is graded (rubric, reference oracle, seed, torch, sandbox)."""
    jobs: int = os.cpu_count() or 1
    scheduler: str | None = None
    sample: int | None = None
    """Grade a seeded sample of this many (mutants and do-nothing variants), or all."""
    sample_seed: int = 0
    operators: tuple[str, ...] = ()
    """Grade only the mutants and do-nothing variants these operators make (all if empty):
    one kind of mistake audited on its own, without grading the rest."""
    programs: int = 400
    """Differential programs run against each survivor."""

    @property
    def reference(self) -> Path:
        if self.grading.reference is None:
            raise UsageFailure("the audit needs the reference solutions (--reference)")
        return self.grading.reference


def candidates(options: AuditOptions) -> list[Mutant]:
    """Every mutant, do-nothing and do-one-thing variant of the reference (of
    ``options.operators`` only, if given), or a seeded sample of the mutants and do-nothing
    variants (a quarter of it do-nothing variants)."""
    reference = options.reference
    changed, idle, one = mutants(reference), do_nothing(reference), do_one_thing(reference)
    if options.operators:
        known = (*operator_names(), *DO_NOTHING, DO_ONE_THING)
        unknown = sorted(set(options.operators) - set(known))
        if unknown:
            raise UsageFailure(f"no operator named {', '.join(unknown)}; known: {', '.join(known)}")
        changed = [m for m in changed if m.operator in options.operators]
        idle = [m for m in idle if m.operator in options.operators]
        one = [m for m in one if m.operator in options.operators]
    if options.sample is None:
        return [*changed, *idle, *one]
    some_idle = min(len(idle), max(1, options.sample // 4))
    return [
        *sample(changed, options.sample - some_idle, options.sample_seed),
        *sample(idle, some_idle, options.sample_seed),
    ]


def _uploads(options: AuditOptions, assignment: str, chosen: Sequence[Mutant]) -> Path:
    """A folder of uploads, as a class hands them in: the reference, each mutant, and the
    stubs where a do-one-thing variant is among them."""
    folder = options.out / "mutants" / assignment
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copytree(
        options.reference,
        folder / BASELINE,
        ignore=shutil.ignore_patterns("__pycache__", JUDGEMENTS),
    )
    if any(m.kind == DO_ONE_THING for m in chosen):
        shutil.copytree(options.reference, folder / STUBS, ignore=shutil.ignore_patterns(*SKIPPED))
        for relative, text in stub_files(options.reference).items():
            (folder / STUBS / relative).write_text(text, encoding="utf-8")
    for mutant in chosen:
        mutant.write(options.reference, folder / mutant.id)
    return folder


def grade_all(
    options: AuditOptions, chosen: Sequence[Mutant], rubric: rubric_module.Rubric, console: Console
) -> dict[str, dict[str, GradeReport | str]]:
    """Per assignment, each upload's grade (or why there is none), graded as a batch. The
    ``*.graphs`` items are left out: a mutant may lose them anyway, and one they alone would
    kill survives here and is told apart by the differential run."""
    grades: dict[str, dict[str, GradeReport | str]] = {}
    for assignment in sorted({m.region.assignment for m in chosen}):
        mine = [m for m in chosen if m.region.assignment == assignment]
        only = tuple(
            i.id
            for i in rubric.items
            if i.assignment == assignment and not i.id.endswith(".graphs")
        )
        console.print(f"{assignment}: {len(mine)} mutants and do-nothing variants")
        run = run_batch(
            BatchOptions(
                submissions=_uploads(options, assignment, mine).absolute(),
                out=(options.out / "grades" / assignment).absolute(),
                grading=dataclasses.replace(options.grading, assignment=assignment, only=only),
                jobs=options.jobs,
                scheduler=options.scheduler,
            ),
            console,
        )
        grades[assignment] = {r.student: r.report or r.error or "not graded" for r in run.results}
    return grades


def _scores(report: GradeReport) -> dict[str, float]:
    return {item.id: float(item.score) for item in report.results}


@dataclass(frozen=True)
class Judgements:
    """What a person decided about some mutants, with why (``reference/audit-judgements.yaml``):
    ``equivalent`` ones behave as the reference does where the course documents behaviour,
    ``overwrites`` are an overwritten gradient although not written as ``+=`` -> ``=``, and
    ``rebinds`` are a ``+=`` -> ``=`` that overwrites nothing (``=`` rebinds a loop's name: the
    gradient is lost, never added, and overwrite-grad would be the wrong name)."""

    equivalent: dict[str, str] = dataclasses.field(default_factory=dict)
    overwrites: dict[str, str] = dataclasses.field(default_factory=dict)
    rebinds: dict[str, str] = dataclasses.field(default_factory=dict)


def load_judgements(reference: Path) -> Judgements:
    """The judgements of the audit of ``reference`` (none: no file)."""
    return read_judgements(reference / JUDGEMENTS)


def read_judgements(path: Path) -> Judgements:
    """The judgements in ``path`` (also the grader's own, ``tests/self_audit.py``)."""
    if not path.is_file():
        return Judgements()
    data = yaml.safe_load(path.read_text()) or {}
    sections = {name: data.get(name) or {} for name in ("equivalent", "overwrites", "rebinds")}
    if (
        not isinstance(data, dict)
        or set(data) - set(sections)
        or not all(
            isinstance(section, dict) and all(isinstance(v, str) for v in section.values())
            for section in sections.values()
        )
    ):
        raise UsageFailure(
            f"{path}: expected 'equivalent', 'overwrites' and 'rebinds', each a mapping "
            "of mutant id to the reason"
        )
    return Judgements(
        **{name: {str(k): v for k, v in section.items()} for name, section in sections.items()}
    )


def judge(
    mutant: Mutant,
    report: GradeReport | str,
    baseline: GradeReport,
    shared: frozenset[str] = frozenset(),
    overwrites: frozenset[str] = frozenset(),
    rebinds: frozenset[str] = frozenset(),
) -> Verdict:
    """The verdict on one graded mutant, against the reference's grade (``differs`` and
    ``equivalent`` are decided later, by the differential run). ``shared``: items several
    regions serve (``micrograd.sugar``: one test per composed operator), where a do-nothing
    body must cost its own tests' points, not the whole item's. ``overwrites``: mutants that
    may be named overwrite-grad besides the ``+=`` -> ``=`` ones; ``rebinds``: ``+=`` -> ``=``
    ones that must not be."""
    region = mutant.region
    own = (*region.serves, *region.also)
    start = Verdict(
        id=mutant.id,
        kind=mutant.kind,
        operator=mutant.operator,
        description=mutant.description,
        home=region.serves[0],
        own=own,
        verdict=ERROR,
        region=where(region),
    )
    if isinstance(report, str):
        return dataclasses.replace(start, note=f"not graded: {report}")
    reference, scores = _scores(baseline), _scores(report)
    lost = tuple(i for i in reference if scores.get(i, 0.0) < reference[i] - 1e-9)
    leaked = tuple(i for i in lost if i not in own and i != f"{region.assignment}.graphs")
    named = tuple(sorted({bug for item in report.results for bug in item.bugs}))
    overwrite = (
        mutant.operator == OVERWRITE_OPERATOR and mutant.id not in rebinds
    ) or mutant.id in overwrites
    verdict = dataclasses.replace(
        start,
        lost=lost,
        leaked=leaked,
        named=named,
        misdiagnosis=_misdiagnosis(overwrite, lost, named),
    )
    if mutant.kind == "do-nothing":
        earned = sum(scores.get(i, 0.0) for i in region.serves if i not in shared)
        kept = [i for i in region.serves if i in shared and i not in lost]
        note = f"kept every point of {', '.join(kept)}" if kept else ""
        return dataclasses.replace(
            verdict,
            earned=earned,
            note=note,
            verdict=EARNS_POINTS if earned or kept else NOTHING_EARNED,
        )
    if not lost:
        return dataclasses.replace(verdict, verdict=EQUIVALENT)
    if not set(lost) & set(own):
        return dataclasses.replace(verdict, verdict=ELSEWHERE)
    return dataclasses.replace(verdict, verdict=LEAK if leaked else KILLED)


def where(region: Region) -> str:
    """A region as the report names it: its file, its BEGIN line, its function."""
    return f"{Path(region.file).name}:{region.start} {region.function}"


def _misdiagnosis(overwrite: bool, lost: Sequence[str], named: Sequence[str]) -> str:
    """A killed overwrite must be named overwrite-grad; nothing else may be."""
    if overwrite and lost and OVERWRITE_BUG not in named:
        return f"killed but not named {OVERWRITE_BUG}"
    if not overwrite and OVERWRITE_BUG in named:
        return f"named {OVERWRITE_BUG}, which it is not"
    return ""


FORWARDS, BACKWARDS = ("forward", "compute"), ("backward", "gradient")
"""The method names of an op's two halves, as the courses spell them."""


def a_part(region: Region, item: str, every: Sequence[Region]) -> bool:
    """Is ``region`` half of an op, which shows nothing of ``item`` alone: the regions serving
    ``item`` are the methods of one class, a forward (``forward``, ``compute``) and a backward
    (``backward``, ``gradient``), and ``region`` is one of them?"""
    servers = [r for r in every if item in r.serves]
    classes = {(r.file, r.function.rpartition(".")[0]) for r in servers}
    methods = {r.function.rpartition(".")[2] for r in servers}
    return (
        region in servers
        and len(classes) == 1
        and methods <= {*FORWARDS, *BACKWARDS}
        and bool(methods & set(FORWARDS))
        and bool(methods & set(BACKWARDS))
    )


def judge_one_thing(
    variants: Sequence[Mutant],
    grades: dict[str, dict[str, GradeReport | str]],
    every: Sequence[Region],
    points: dict[str, float],
) -> list[Verdict]:
    """Each do-one-thing variant's verdict, from the points it earns above the stubs' grade.
    What its region allows on an item (``docs/items.md``): nothing where the region neither
    serves nor helps grade it, nor where it is half of it (``a_part``); else up to its
    points, the variants of all the regions of an item earning at most its points together (an
    item several regions share, such as ``micrograd.accumulate``, one test per op, pays each
    its share). An item no region serves or helps grade (code the course gives, such as this
    course's ``babygrad.tensor_ops``, whose tests run the student's forwards) is shared so by
    every region. ``over``: the points beyond that."""
    earned: dict[str, dict[str, float]] = {}
    notes: dict[str, str] = {}
    for variant in variants:
        mine = grades[variant.region.assignment]
        report, stubs = mine.get(variant.id, "not graded"), mine.get(STUBS)
        if not isinstance(stubs, GradeReport):
            raise UsageFailure(f"the stubs of the reference could not be graded: {stubs}")
        if isinstance(report, str):
            notes[variant.id] = f"not graded: {report}"
            continue
        base, scores = _scores(stubs), _scores(report)
        earned[variant.id] = {
            i: scores[i] - base.get(i, 0.0)
            for i in scores
            if scores[i] > base.get(i, 0.0) + EPSILON
        }
    given = {
        item
        for variant in variants
        for item in earned.get(variant.id, {})
        if not any(item in (*r.serves, *r.also) for r in every)
    }

    def owns(region: Region, item: str) -> bool:
        mine = item in (*region.serves, *region.also) or item in given
        return mine and not a_part(region, item, every)

    together: Counter[str] = Counter()
    for variant in variants:
        for item, gained in earned.get(variant.id, {}).items():
            if owns(variant.region, item):
                together[item] += gained
    verdicts = []
    for variant in variants:
        region = variant.region
        start = Verdict(
            id=variant.id,
            kind=variant.kind,
            operator=variant.operator,
            description=variant.description,
            home=region.serves[0],
            own=(*region.serves, *region.also),
            verdict=ERROR,
            note=notes.get(variant.id, ""),
            region=where(region),
        )
        if variant.id not in earned:
            verdicts.append(start)
            continue
        over: dict[str, float] = {}
        for item, gained in earned[variant.id].items():
            if not owns(region, item):
                over[item] = gained
            elif together[item] > points[item] + EPSILON:
                over[item] = gained * (together[item] - points[item]) / together[item]
        gains = earned[variant.id]
        verdicts.append(
            dataclasses.replace(
                start,
                verdict=EARNS_POINTS if over else OWN_SHARE,
                earned=round(sum(gains.values()), 4),
                over=round(sum(over.values()), 4),
                note="; ".join(
                    f"{item} {gains[item]:.4g}"
                    + (f" ({over[item]:.4g} more than it allows)" if item in over else "")
                    for item in gains
                ),
            )
        )
    return verdicts


def triage(
    options: AuditOptions, verdicts: list[Verdict], judgements: Judgements, console: Console
) -> list[Verdict]:
    """Each survivor, and each do-nothing variant that earns points, against the reference
    in the wide differential run: a do-nothing body that behaves as the reference is a
    correct one (``equivalent``). A mutant a person judged equivalent is ``confirmed`` with
    their reason, also where the differential run shows a difference the course does not
    grade (kept beside it). The differential programs speak this course's APIs only: another
    course's survivor is confirmed where a person judged it, and otherwise keeps its verdict,
    with a note that says so, for a person to judge."""
    survivors = [
        v for v in verdicts if v.kind != DO_ONE_THING and v.verdict in (EQUIVALENT, EARNS_POINTS)
    ]
    folder = options.out / "mutants"

    def run(verdict: Verdict) -> Verdict:
        assignment = verdict.home.split(".")[0]
        if assignment not in SPOKEN:
            if verdict.id in judgements.equivalent:
                return dataclasses.replace(
                    verdict, verdict=CONFIRMED, note=judgements.equivalent[verdict.id]
                )
            return dataclasses.replace(
                verdict,
                note=f"no differential run: its programs are written in {', '.join(SPOKEN)}'s "
                f"APIs, not {assignment}'s",
            )
        found = differ(
            options.reference,
            folder / assignment / verdict.id,
            assignment,
            programs=options.programs,
        )
        difference = None if found is None else dataclasses.asdict(found)
        if verdict.id in judgements.equivalent:
            return dataclasses.replace(
                verdict,
                verdict=CONFIRMED,
                difference=difference,
                note=judgements.equivalent[verdict.id],
            )
        if found is not None:
            return dataclasses.replace(
                verdict,
                verdict=DIFFERS if verdict.kind == "mutant" else verdict.verdict,
                difference=difference,
            )
        return dataclasses.replace(verdict, verdict=EQUIVALENT)

    triaged = {}
    with Progress(console=console) as progress, ThreadPoolExecutor(max(1, options.jobs)) as pool:
        task = progress.add_task("survivors: differential run", total=len(survivors))
        for verdict in pool.map(run, survivors):
            triaged[verdict.id] = verdict
            progress.advance(task)
    return [triaged.get(v.id, v) for v in verdicts]


NO_REGIONS = (
    "{} has no solution regions: the audit mutates the code between '# BEGIN SOLUTION "
    "[items]: instruction' and '# END SOLUTION' (docs/course-authors.md, 'Solution "
    "regions'), and with none it would grade no mutant and find no hole"
)
"""Why an audit of a reference without markers stops (it printed 0 holes, exit 0)."""


def run(options: AuditOptions, console: Console) -> AuditReport:
    """Make, grade, judge and triage; write ``audit.json`` and ``audit.html`` into ``out``."""
    started = time.monotonic()
    rubric = rubric_module.load(options.grading.rubric)
    if not regions(options.reference):
        raise UsageFailure(NO_REGIONS.format(options.reference))
    verify_reference(options.grading, rubric)
    chosen = candidates(options)
    grades = grade_all(options, chosen, rubric, console)
    judgements = load_judgements(options.reference)
    served = Counter(item for region in regions(options.reference) for item in region.serves)
    shared = frozenset(item for item, count in served.items() if count > 1)
    verdicts = []
    for mutant in (m for m in chosen if m.kind != DO_ONE_THING):
        mine = grades[mutant.region.assignment]
        baseline = mine.get(BASELINE)
        if not isinstance(baseline, GradeReport):
            raise UsageFailure(f"the reference itself could not be graded: {baseline}")
        verdicts.append(
            judge(
                mutant,
                mine.get(mutant.id, "not graded"),
                baseline,
                shared,
                frozenset(judgements.overwrites),
                frozenset(judgements.rebinds),
            )
        )
    verdicts = triage(options, verdicts, judgements, console)
    verdicts += judge_one_thing(
        [m for m in chosen if m.kind == DO_ONE_THING],
        grades,
        regions(options.reference),
        {item.id: item.points for item in rubric.items},
    )
    report = AuditReport(
        verdicts,
        [i.id for i in rubric.items],
        duration_s=time.monotonic() - started,
        coverage=coverage.measure(rubric, options.grading.seed),
    )
    write_atomically(options.out / "audit.json", json.dumps(report.to_json(), indent=1))
    write_atomically(options.out / "audit.html", audit_html(report))
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default="audit",
        help="folder for the mutants, their grades, audit.json and audit.html (default: audit/)",
    )
    add_grading_options(parser, slot=DEFAULT_SLOT)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786)")
    parser.add_argument("--sample", type=int, help="grade a seeded sample of this many")
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument(
        "--operator",
        action="append",
        default=[],
        dest="operators",
        metavar="NAME",
        help="grade only the mutants this operator makes (repeatable; "
        "python -m grader.audit.mutants counts them per operator)",
    )
    parser.add_argument(
        "--programs", type=int, default=400, help="differential programs per surviving mutant"
    )


def main(args: argparse.Namespace) -> int:
    console = Console(highlight=False, stderr=True)
    options = AuditOptions(
        out=Path(args.out),
        grading=batch_grade_options(args),
        jobs=args.jobs,
        scheduler=args.scheduler,
        sample=args.sample,
        sample_seed=args.sample_seed,
        operators=tuple(args.operators),
        programs=args.programs,
    )
    try:
        report = run(options, console)
    except (UsageFailure, rubric_module.RubricError) as exc:
        console.print(f"[red]usage error:[/red] {exc}")
        return EXIT_USAGE
    render(report, Console(highlight=False))
    console.print(f"wrote {options.out / 'audit.json'} and {options.out / 'audit.html'}")
    return EXIT_BELOW if report.holes or report.unreached else EXIT_OK
