"""The solution markers of a course's reference: what a student writes, and what grades it.

Every piece of reference code that students must write is fenced like this::

    # BEGIN SOLUTION [<serves>; <also>]: <one-line instruction for the student>
    ...solution lines...
    # END SOLUTION

The brackets name rubric item ids (``micrograd.ops.add``), comma-separated: before the ``;``
the items the region serves (each grades this code; a body that does nothing must score 0
there), after it (optional) items that also grade a part of it. The assignment's ``*.graphs``
item is implied for every region. A marker too long for its line goes on over the comment
lines right after it that are indented (``#`` and at least two spaces): the items until the
``]``, and the instruction when nothing follows the colon::

    # BEGIN SOLUTION [babygrad.broadcasting; babygrad.ops.add, babygrad.ops.sub,
    #   babygrad.ops.div]:
    #   an instruction that would not fit on the marker's line

Rendering replaces each fenced block, markers included, with a comment naming the items it
serves (``# graded by micrograd.ops.add``) and one ``raise NotImplementedError("<instruction>")``
at the marker's indentation; everything else is copied verbatim. Two jobs read the markers:
the release writes the students' stubs with them (``grader.release.stubs``), and the audit
knows from them what each mutant of a region must cost (``grader.audit.mutants``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
MAX_LINE = 99
MARKER = re.compile(r"# BEGIN SOLUTION \[(?P<items>[^\]]*)\]:(?P<instruction>.*)")
ITEM = re.compile(r"[a-z]+(\.[a-z_]+)+")
"""A rubric item id, as the rubric's schema has it."""
EXAMPLE = "# BEGIN SOLUTION [micrograd.ops.add; micrograd.accumulate]: <instruction>"


class MarkerError(ValueError):
    """A reference file has malformed solution markers."""


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced solution block of a reference file."""

    start: int
    """1-based line of its ``# BEGIN SOLUTION`` marker."""
    end: int
    """1-based line of its ``# END SOLUTION`` marker."""
    indent: str
    instruction: str
    serves: tuple[str, ...]
    """The rubric items this code is graded by: a body that does nothing must score 0 there."""
    also: tuple[str, ...]
    """Items that also grade a part of it (a mutant killed there is not a blame leak)."""
    body: int
    """1-based line of its first solution line (after the marker and its continuation)."""

    @property
    def items(self) -> tuple[str, ...]:
        return (*self.serves, *self.also)


def _item_ids(text: str, where: str) -> tuple[str, ...]:
    ids = tuple(part.strip() for part in text.split(",") if part.strip())
    for item in ids:
        if not ITEM.fullmatch(item):
            raise MarkerError(f"{where}: {item!r} is not a rubric item id")
    return ids


def _marker(stripped: str, where: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(serves, also, instruction) of one ``# BEGIN SOLUTION [...]: ...`` line."""
    match = MARKER.fullmatch(stripped)
    if match is None:
        if stripped.startswith(BEGIN + ":"):
            raise MarkerError(
                f"{where}: BEGIN SOLUTION must name the rubric items it serves: {EXAMPLE}"
            )
        raise MarkerError(f"{where}: malformed solution marker: {stripped!r} (expected {EXAMPLE})")
    serves, _, also = match["items"].partition(";")
    serves_ids, also_ids = _item_ids(serves, where), _item_ids(also, where)
    if not serves_ids:
        raise MarkerError(f"{where}: BEGIN SOLUTION names no item it serves (before the ';')")
    if len(set(serves_ids + also_ids)) != len(serves_ids + also_ids):
        raise MarkerError(f"{where}: an item is named twice")
    return serves_ids, also_ids, match["instruction"].strip()


def _continues(lines: list[str], index: int) -> bool:
    """Does ``lines[index]`` (the line after the marker so far) continue a marker? A
    continuation is a comment indented inside it (``#`` and at least two spaces), so a
    solution may start with a comment of its own."""
    return (
        index < len(lines)
        and lines[index].strip().startswith("#  ")
        and ("SOLUTION" not in lines[index])
    )


def solution_blocks(source: str, name: str = "<source>") -> list[Block]:
    """Every solution block of ``source``, in order; MarkerError (``name:line: ...``) when the
    markers are malformed."""
    blocks: list[Block] = []
    lines = source.splitlines()
    opened: Block | None = None  # the block being read (its end still unknown)
    solution_lines = 0
    number = 0
    while number < len(lines):
        number += 1
        line = lines[number - 1]
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        where = f"{name}:{number}"
        if stripped.startswith(BEGIN):
            if opened is not None:
                raise MarkerError(f"{where}: nested BEGIN SOLUTION (open at {opened.start})")
            start = number
            marker = stripped
            while "[" in marker and "]" not in marker and _continues(lines, number):
                marker += " " + lines[number].strip().lstrip("#").strip()
                number += 1
            serves, also, instruction = _marker(marker, where)
            if not instruction:  # it follows on the comment lines right after the marker
                parts = []
                while _continues(lines, number):
                    parts.append(lines[number].strip().lstrip("#").strip())
                    number += 1
                instruction = " ".join(part for part in parts if part)
            if not instruction:
                raise MarkerError(f"{where}: BEGIN SOLUTION needs an instruction")
            opened = Block(
                start=start,
                end=0,
                indent=indent,
                instruction=instruction,
                serves=serves,
                also=also,
                body=number + 1,
            )
            solution_lines = 0
        elif stripped == END:
            if opened is None:
                raise MarkerError(f"{where}: END SOLUTION without BEGIN SOLUTION")
            if indent != opened.indent:
                raise MarkerError(f"{where}: END SOLUTION indented unlike its BEGIN")
            if solution_lines == 0:
                raise MarkerError(f"{name}:{opened.start}: empty solution block")
            blocks.append(dataclasses.replace(opened, end=number))
            opened = None
        elif (
            "SOLUTION" in stripped
            and stripped.startswith("#")
            and ("BEGIN" in stripped or "END" in stripped)
        ):
            raise MarkerError(f"{where}: malformed solution marker: {stripped!r}")
        elif opened is not None:
            solution_lines += 1
    if opened is not None:
        raise MarkerError(f"{name}:{opened.start}: BEGIN SOLUTION never closed")
    return blocks


def check_items(blocks: list[Block], known: Collection[str], name: str) -> None:
    """Every item a block names must be one of the rubric's (``known``)."""
    for block in blocks:
        unknown = [item for item in block.items if item not in known]
        if unknown:
            raise MarkerError(f"{name}:{block.start}: {', '.join(unknown)} not in the rubric")


def _string_literal(text: str) -> str:
    """A double-quoted Python string literal for ``text``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _raise_lines(indent: str, instruction: str) -> list[str]:
    """The stub statement replacing one block, wrapped to stay within MAX_LINE columns."""
    one_line = f"{indent}raise NotImplementedError({_string_literal(instruction)})"
    if len(one_line) <= MAX_LINE:
        return [one_line]
    inner = indent + " " * 4
    width = max(20, MAX_LINE - len(inner) - 3)
    chunks: list[str] = []
    current = ""
    for word in instruction.split(" "):
        candidate = f"{current} {word}" if current else word
        if current and len(candidate) + 1 > width:
            chunks.append(current + " ")
            current = word
        else:
            current = candidate
    chunks.append(current)
    body = [f"{inner}{_string_literal(chunk)}" for chunk in chunks]
    return [f"{indent}raise NotImplementedError(", *body, f"{indent})"]


def _graded_by(block: Block, hidden: Collection[str]) -> list[str]:
    """The comment telling the student which items grade this part (hidden ones left out;
    the items that grade it only in part are the audit's business, not shown)."""
    serves = [item for item in block.serves if item not in hidden]
    return [f"{block.indent}# graded by {', '.join(serves)}"] if serves else []


def render_source(
    source: str,
    name: str = "<source>",
    known: Collection[str] | None = None,
    hidden: Collection[str] = (),
    keep: Collection[int] = (),
) -> str:
    """Return ``source`` with every solution block replaced by a NotImplementedError stub,
    under a comment naming the items that grade it (but ``hidden`` ones). With ``known`` (the
    rubric's item ids) every item a marker names must be one of them. ``keep``: the BEGIN
    lines of blocks left as solved (the audit's do-one-thing variants: stubs and one
    solution)."""
    blocks = solution_blocks(source, name)
    if known is not None:
        check_items(blocks, known, name)
    lines = source.splitlines()
    out: list[str] = []
    at = 0
    for block in (b for b in blocks if b.start not in keep):
        out.extend(lines[at : block.start - 1])
        out.extend(_graded_by(block, hidden))
        out.extend(_raise_lines(block.indent, block.instruction))
        at = block.end
    out.extend(lines[at:])
    return "\n".join(out) + "\n"
