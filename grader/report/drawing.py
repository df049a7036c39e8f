"""Draw a counterexample figure (``grader.language.figures``) the way the course notes draw graphs.

One box per node with its op, value, expected and submitted gradient; one arrow per operand use,
so ``a + a`` shows two arrows into ``b``. A wrong node is marked twice, by colour and by a
``✗ WRONG`` marker, so the picture still reads in grayscale. Graphviz (``dot``) draws an SVG where
it is installed; a text drawing stands in where it is not, so feedback never depends on it.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from html import escape
from typing import Any

from grader.language.figures import Figure

MARK = "✗"
WRONG_FILL = "#ffd7d0"
"""Fill of a wrong node: used nowhere else, so a screenshot can find the drawn graph by it."""
WRONG_LINE = "#b71c1c"
RIGHT_FILL = "#f4f7fb"
RIGHT_LINE = "#5a6b7d"
NUMBER_FONT = "DejaVu Sans Mono"
DOT_SECONDS = 10
ROWS = (("value", "value"), ("expected", "grad expected"), ("got", "grad yours"))


@dataclass(frozen=True)
class Picture:
    """A drawn figure: the Graphviz SVG where ``dot`` ran, and always the text drawing."""

    svg: str | None
    lines: tuple[tuple[str, bool], ...]
    """The text drawing, one ``(line, belongs to a wrong node)`` pair per line."""

    @property
    def text(self) -> str:
        return "\n".join(line for line, _ in self.lines)


def dot_program() -> str | None:
    """Where Graphviz's ``dot`` is; None draws text only."""
    return shutil.which("dot")


def draw(figure: Figure, ident: str = "figure") -> Picture:
    """The picture of ``figure``; ``ident`` prefixes the SVG's element ids (unique per page)."""
    dot = dot_program()
    svg = None
    if dot:
        try:
            svg = render_svg(figure, dot, ident)
        except (OSError, subprocess.SubprocessError):
            svg = None  # a broken Graphviz costs the drawing, never the report
    return Picture(svg, tuple(text_lines(figure)))


def _inputs(figure: Figure) -> dict[str, list[str]]:
    """Each node's operands in edge order, an edge label (local gradient) after its operand."""
    inputs: dict[str, list[str]] = {node["id"]: [] for node in figure["nodes"]}
    for edge in figure["edges"]:
        label = f" ({edge['label']})" if edge.get("label") else ""
        inputs[edge["to"]].append(f"{edge['from']}{label}")
    return inputs


def _cell(value: str | None) -> list[str]:
    """A value's lines: an array's shape, then its rows (``judge.show``)."""
    return (value or "—").splitlines()


def text_lines(figure: Figure) -> list[tuple[str, bool]]:
    """Nodes in graph order (operands first), each ``id = op(operands)`` then its numbers."""
    inputs = _inputs(figure)
    lines = [
        (
            f"Counterexample graph ({MARK} WRONG marks a node whose gradient or value is wrong)",
            False,
        )
    ]
    width = max(len(label) for _, label in ROWS)
    for node in figure["nodes"]:
        wrong = node["wrong"]
        operands = inputs[node["id"]]
        name = (
            f"{node['id']} = {node['op']}({', '.join(operands)})"
            if operands
            else f"{node['id']}  {node['op']}"
        )
        marker = f"   {MARK} WRONG" if wrong else ""
        lines.append((f"{MARK if wrong else ' '} {name}{marker}", wrong))
        for key, label in ROWS:
            if key == "value" and node["value"] is None:
                continue
            first, *rest = _cell(node[key])
            lines.append((f"      {label:<{width}}  {first}", wrong))
            lines += [(f"      {'':<{width}}  {line}", wrong) for line in rest]
    return lines


def _label(node: dict[str, Any]) -> str:
    """A Graphviz HTML-like label: a header row, then value and gradients."""
    wrong = node["wrong"]
    colour = WRONG_LINE if wrong else RIGHT_LINE
    head = (
        f"{MARK} {node['id']}  ·  {node['op']}   WRONG"
        if wrong
        else f"{node['id']}  ·  {node['op']}"
    )
    rows = [
        f'<TR><TD COLSPAN="2" BGCOLOR="{colour}"><FONT COLOR="white"><B>{escape(head)}'
        "</B></FONT></TD></TR>"
    ]
    for key, name in ROWS:
        if key == "value" and node["value"] is None:
            continue
        text = "<BR/>".join(escape(line) for line in _cell(node[key]))
        if key == "got" and wrong:
            text = f"<B>{text}</B>"
        rows.append(
            f'<TR><TD ALIGN="LEFT">{name}</TD><TD ALIGN="LEFT" BALIGN="LEFT">'
            f'<FONT FACE="{NUMBER_FONT}">{text}</FONT></TD></TR>'
        )
    fill = WRONG_FILL if wrong else RIGHT_FILL
    border = 3 if wrong else 1
    return (
        f'<<TABLE BORDER="{border}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="4" '
        f'COLOR="{colour}" BGCOLOR="{fill}">{"".join(rows)}</TABLE>>'
    )


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot_source(figure: Figure, ident: str = "figure") -> str:
    """The Graphviz program: operands on the left, the output on the right, as in the notes."""
    lines = [
        f"digraph {_quote(ident)} {{",
        f"  id={_quote(ident)};",
        '  rankdir=LR; bgcolor="transparent"; nodesep=0.3; ranksep=0.6;',
        '  node [shape=plain fontname="Helvetica" fontsize=11];',
        f'  edge [color="{RIGHT_LINE}" arrowsize=0.7 fontname="Helvetica" fontsize=10];',
    ]
    lines += [f"  {_quote(node['id'])} [label={_label(node)}];" for node in figure["nodes"]]
    for edge in figure["edges"]:
        label = f" [label={_quote(edge['label'])}]" if edge.get("label") else ""
        lines.append(f"  {_quote(edge['from'])} -> {_quote(edge['to'])}{label};")
    return "\n".join([*lines, "}"])


def render_svg(figure: Figure, dot: str, ident: str = "figure") -> str:
    """Run ``dot``; keep only the ``<svg>`` element, ready to inline in HTML."""
    done = subprocess.run(
        [dot, "-Tsvg"],
        input=dot_source(figure, ident),
        capture_output=True,
        text=True,
        timeout=DOT_SECONDS,
        check=True,
    )
    return done.stdout[done.stdout.index("<svg") :].strip()
