"""A rubric audit's verdicts, and the three places they are read: the terminal, JSON, HTML.

``python -m grader audit`` (``grader.audit.audit``) grades mutants of the reference; each
becomes one ``Verdict`` here. The per-item table counts them the same way in every format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from html import escape
from typing import Any

from rich.console import Console
from rich.table import Table

from grader.language.coverage import ItemCoverage

KILLED, LEAK, ELSEWHERE = "killed", "leak", "elsewhere"
DIFFERS, EQUIVALENT, CONFIRMED = "differs", "equivalent", "confirmed-equivalent"
NOTHING_EARNED, EARNS_POINTS, ERROR = "earns-nothing", "earns-points", "error"
OWN_SHARE = "earns-its-share"
"""A do-one-thing variant that earns no more than its region's items allow."""
DO_ONE_THING = "do-one-thing"
HOLES = (LEAK, ELSEWHERE, DIFFERS, EARNS_POINTS, ERROR)
"""Verdicts that mean the rubric (or the audit run) is wrong somewhere."""

COLUMNS = (
    "mutants",
    KILLED,
    LEAK,
    ELSEWHERE,
    DIFFERS,
    EQUIVALENT,
    "do-nothing points",
    "do-one-thing over",
    "misdiagnoses",
)
"""The per-item table's columns; ``equivalent`` counts confirmed and unconfirmed ones."""


@dataclass(frozen=True)
class Verdict:
    """What grading one mutant (or do-nothing variant) of the reference showed."""

    id: str
    kind: str
    """``mutant``, ``do-nothing`` or ``do-one-thing``."""
    operator: str
    description: str
    home: str
    """The first item its region serves: the row of the per-item table it is counted in."""
    own: tuple[str, ...]
    """Every item the region serves or helps grade (a loss there is the mutant's own)."""
    verdict: str
    lost: tuple[str, ...] = ()
    """Items that scored below the reference's score."""
    leaked: tuple[str, ...] = ()
    """Lost items that are neither the region's own nor its assignment's ``*.graphs``."""
    named: tuple[str, ...] = ()
    """Bug ids the feedback named, on any item."""
    misdiagnosis: str = ""
    earned: float = 0.0
    """Do-nothing variants: the points still earned on the items the region serves;
    do-one-thing variants: the points earned above the stubs' own grade."""
    over: float = 0.0
    """Do-one-thing variants: the points earned beyond what the region's items allow."""
    difference: dict[str, str] | None = None
    """A survivor's runnable example of different behaviour (program, expected, got)."""
    note: str = ""
    """Why a confirmed equivalent is equivalent, or why grading failed."""
    region: str = ""
    """The region its code replaces or fills in (``engine.py:54 Value.__add__``): a region's
    do-nothing and do-one-thing variants are listed together by it."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AuditReport:
    """Every verdict of one audit, and how long it took."""

    verdicts: list[Verdict]
    items: list[str]
    """The rubric items in rubric order (the table's rows)."""
    duration_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    coverage: list[ItemCoverage] = field(default_factory=list)
    """Per item, how many of its examples at the rubric's seed reach each dimension of its
    contract (``grader.audit.coverage``)."""

    def rows(self) -> list[tuple[str, dict[str, float]]]:
        """Per item, the count of each column; then a total row."""
        table = {item: dict.fromkeys(COLUMNS, 0.0) for item in self.items}
        for verdict in self.verdicts:
            row = table.setdefault(verdict.home, dict.fromkeys(COLUMNS, 0.0))
            if verdict.kind == "do-nothing":
                row["do-nothing points"] += verdict.earned
                row[LEAK] += bool(verdict.leaked)
            elif verdict.kind == DO_ONE_THING:
                row["do-one-thing over"] += verdict.over
            else:
                row["mutants"] += 1
                column = EQUIVALENT if verdict.verdict == CONFIRMED else verdict.verdict
                if column in row:
                    row[column] += 1
            row["misdiagnoses"] += bool(verdict.misdiagnosis)
        total = {column: sum(row[column] for row in table.values()) for column in COLUMNS}
        return [
            *((item, row) for item, row in table.items() if any(row.values())),
            ("total", total),
        ]

    @property
    def holes(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict in HOLES or v.misdiagnosis or v.leaked]

    @property
    def one_thing(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.kind == DO_ONE_THING]

    def variants(self) -> list[tuple[str, list[Verdict], list[Verdict]]]:
        """Each region that has variants, in the order met: its do-nothing variants (its body
        replaced: they must earn nothing) beside its do-one-thing variant (the stubs and it
        alone: it may earn its items' share), so what the same code earns in both is read on
        one line."""
        regions: dict[str, tuple[list[Verdict], list[Verdict]]] = {}
        for v in self.verdicts:
            if v.kind in ("do-nothing", DO_ONE_THING):
                idle, one = regions.setdefault(v.region or v.id, ([], []))
                (one if v.kind == DO_ONE_THING else idle).append(v)
        return [(region, idle, one) for region, (idle, one) in regions.items()]

    def one_thing_summary(self) -> str:
        """How many do-one-thing variants earn no more than their region's items allow."""
        within = sum(v.verdict == OWN_SHARE for v in self.one_thing)
        return (
            f"{len(self.one_thing)} do-one-thing variant(s) (the stubs and one region): "
            f"{within} earn no more than their region's items allow"
        )

    @property
    def unreached(self) -> list[ItemCoverage]:
        """Items with a dimension of their contract none of their examples reach."""
        return [c for c in self.coverage if c.missing]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "autograd-grader/audit/1",
            "duration_s": round(self.duration_s, 1),
            "notes": self.notes,
            "table": [{"item": item, **row} for item, row in self.rows()],
            "coverage": [c.to_json() for c in self.coverage],
            "verdicts": [v.to_json() for v in self.verdicts],
        }


def _cell(value: float) -> str:
    return f"{value:g}" if value else "·"


def render(report: AuditReport, console: Console) -> None:
    """The per-item table, then one line per hole."""
    table = Table(title="rubric audit: mutants of the reference, by the item they belong to")
    table.add_column("item")
    for column in COLUMNS:
        table.add_column(column, justify="right")
    for item, row in report.rows():
        table.add_row(item, *(_cell(row[c]) for c in COLUMNS), end_section=item == "total")
    console.print(table)
    if report.coverage:
        coverage = Table(title="contract coverage: examples per dimension at the rubric's seed")
        for column in ("item", "examples", "dimensions (examples)", "unreached"):
            coverage.add_column(column)
        for item in report.coverage:
            coverage.add_row(
                item.item, str(item.examples), _counts(item), ", ".join(item.missing) or "·"
            )
        console.print(coverage)
    for note in report.notes:
        console.print(note)
    if report.variants():
        variants = Table(title=VARIANTS_TITLE)
        for column in VARIANT_COLUMNS:
            variants.add_column(column)
        for row in _variant_rows(report):
            variants.add_row(*row)
        console.print(variants)
    if report.one_thing:
        console.print(report.one_thing_summary())
    for verdict in report.holes:
        console.print(
            f"[red]{verdict.verdict}[/red] {verdict.id}: {verdict.description}{_why(verdict)}"
        )
    console.print(
        f"{len(report.verdicts)} graded in {report.duration_s:.0f} s; {len(report.holes)} hole(s)"
    )


VARIANTS_TITLE = "do-nothing and do-one-thing variants, by region"
VARIANT_COLUMNS = (
    "region",
    "items",
    "do-nothing (points kept on its items)",
    "do-one-thing (points above the stubs)",
)


def _variant_rows(report: AuditReport) -> list[tuple[str, str, str, str]]:
    """One row per region: where it is, its items, each do-nothing variant's verdict and the
    points it kept, its do-one-thing variant's verdict and the points it earned."""
    rows = []
    for region, idle, one in report.variants():
        first = (idle or one)[0]
        nothing = "; ".join(
            f"{v.operator.removeprefix('do-nothing-')}: {v.verdict}"
            + (f" {v.earned:g}" if v.earned else "")
            for v in idle
        )
        something = "; ".join(
            f"{v.verdict} {v.earned:g}" + (f" ({v.over:g} over)" if v.over else "") for v in one
        )
        rows.append((region, ", ".join(first.own), nothing or "·", something or "·"))
    return rows


def _variants_html(report: AuditReport) -> list[str]:
    rows = _variant_rows(report)
    if not rows:
        return []
    head = "".join(f"<th>{escape(c)}</th>" for c in VARIANT_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return [
        f"<h2>{escape(VARIANTS_TITLE.capitalize())}</h2><p>Each region's "
        "body replaced by one that does nothing (it must earn nothing on its items), beside "
        "the stubs with that region alone written (above the stubs' grade it may earn only "
        "its items' share).</p>",
        f"<table><tr>{head}</tr>{body}</table>",
    ]


def _counts(item: ItemCoverage) -> str:
    """Each dimension with its count, those the item must reach first."""
    ordered = sorted(item.counts, key=lambda d: (d not in item.required, d))
    return ", ".join(f"{d} {item.counts[d]}" for d in ordered)


def _coverage_html(coverage: Sequence[ItemCoverage]) -> list[str]:
    if not coverage:
        return []
    rows = "".join(
        f"<tr><td>{escape(c.item)}</td><td class=n>{c.examples}</td>"
        f"<td>{escape(_counts(c))}</td><td>{escape(', '.join(c.missing)) or '·'}</td></tr>"
        for c in coverage
    )
    return [
        "<h2>Contract coverage</h2><p>Per item, how many of its examples at the rubric's seed "
        "reach each dimension of its contract; an item's explicit examples reach every one.</p>",
        "<table><tr><th>item</th><th>examples</th><th>dimensions (examples)</th>"
        f"<th>unreached</th></tr>{rows}</table>",
    ]


def _why(verdict: Verdict) -> str:
    parts = []
    if verdict.lost and verdict.verdict != KILLED:
        parts.append(f"lost {', '.join(verdict.lost)}")
    if verdict.earned:
        parts.append(f"earned {verdict.earned:g} points")
    if verdict.over:
        parts.append(f"{verdict.over:g} more than its items allow")
    if verdict.misdiagnosis:
        parts.append(verdict.misdiagnosis)
    if verdict.note:
        parts.append(verdict.note)
    return f" ({'; '.join(parts)})" if parts else ""


STYLE = (
    "body{font:15px/1.45 'DejaVu Sans',Helvetica,Arial,sans-serif;color:#1d2530;"
    "margin:24px auto;max-width:1100px;padding:0 20px}"
    "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 10px;"
    "border-bottom:1px solid #e3e8ee;vertical-align:top}th{background:#eef2f6}"
    "td.n{text-align:right}tr.total{font-weight:bold}"
    "pre{background:#f4f6f8;padding:8px 12px;border-radius:4px;overflow-x:auto}"
    ".hole{border:1px solid #d8dee6;border-radius:6px;padding:10px 16px;margin:12px 0}"
    ".tag{display:inline-block;color:#fff;background:#c62828;border-radius:4px;"
    "padding:1px 6px;font-size:13px}.tag.ok{background:#2e7d32}"
)


def _section(title: str, verdicts: Sequence[Verdict]) -> list[str]:
    if not verdicts:
        return []
    parts = [f"<h2>{escape(title)} ({len(verdicts)})</h2>"]
    for v in verdicts:
        fine = v.verdict in (KILLED, CONFIRMED, NOTHING_EARNED, OWN_SHARE) and not v.misdiagnosis
        parts.append(
            f"<div class=hole><span class='tag{' ok' if fine else ''}'>"
            f"{escape(v.verdict)}</span> <code>{escape(v.id)}</code>"
            f"<p>{escape(v.description)}{escape(_why(v))}</p>"
        )
        if v.difference:
            parts += [
                f"<pre>{escape(v.difference['program'])}</pre>",
                f"<p>reference: <code>{escape(v.difference['expected'])}</code></p>",
                f"<p>mutant: <code>{escape(v.difference['got'])}</code></p>",
            ]
        parts.append("</div>")
    return parts


def audit_html(report: AuditReport) -> str:
    """One self-contained page: the table, the holes with their examples, the equivalents."""
    head = "".join(f"<th>{escape(c)}</th>" for c in ("item", *COLUMNS))
    rows = "".join(
        f"<tr class='{'total' if item == 'total' else ''}'><td>{escape(item)}</td>"
        + "".join(f"<td class=n>{_cell(row[c])}</td>" for c in COLUMNS)
        + "</tr>"
        for item, row in report.rows()
    )
    equivalents = [v for v in report.verdicts if v.verdict in (EQUIVALENT, CONFIRMED)]
    parts = [
        "<!doctype html><html><head><meta charset=utf-8><title>Rubric audit</title>",
        f"<style>{STYLE}</style></head><body><h1>Rubric audit</h1>",
        f"<p>{len(report.verdicts)} mutants, do-nothing and do-one-thing variants of the "
        f"reference, graded in {report.duration_s:.0f} s.</p>",
        *(f"<p>{escape(note)}</p>" for note in report.notes),
        f"<table><tr>{head}</tr>{rows}</table>",
        *_coverage_html(report.coverage),
        *_section("Holes", report.holes),
        *_section("Equivalent (no difference found)", equivalents),
        *_variants_html(report),
        *([f"<p>{escape(report.one_thing_summary())}.</p>"] if report.one_thing else []),
        *_section("Do-one-thing variants", report.one_thing),
        "</body></html>",
    ]
    return "\n".join(parts)
