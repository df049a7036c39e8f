"""Mutants of the reference's solution regions: what ``python -m grader audit`` grades.

Every ``# BEGIN SOLUTION [serves; also]: ...`` region of ``reference/`` (``grader.release.stubs``
parses the markers) is mutated, one small change at a time, strictly between its markers:

- ``mutants(reference)``: each mutation operator applied at each place it applies in a region,
  one place per mutant; only sources that compile, none the same program as the reference (or
  as another mutant, or as a do-nothing variant), in a fixed order with stable ids;
- ``do_nothing(reference)``: each region's body replaced by the smallest bodies that still run
  (``pass``, ``return None``, the input returned unchanged, zeros or ones of the right shape,
  the result built without its ``_backward`` closure);
- ``do_one_thing(reference)``: the stubs with one region alone written, for each region (partial
  work: what it earns is judged by ``grader.audit.audit.judge_one_thing``);
- ``sample(items, size, seed)``: a fixed, seeded sample spread over regions and operators.

**The operators come from cosmic-ray** (``pip install 'autograd-grader[audit]'``), a maintained
mutation-testing library whose operators work on parso parse trees and can be applied on
demand: ``Operator.mutation_positions(node)`` says where an operator applies and
``cosmic_ray.mutating.MutationVisitor.mutate_code(source, operator, occurrence)`` applies its
n-th occurrence to a source text. The audit walks each region's enclosing function (dedented,
so a parse stays small), finds each operator's occurrences, keeps those strictly inside the
region and applies each as ``mutate_code`` would, to a copy of the one node it changes (a
parse of the function for each mutant took most of the time). cosmic-ray's own operators are
used where it has them (chosen by class name from
``cosmic_ray.operators.provider.OperatorProvider``, a subset, so the audit stays small enough
to grade in full): binary ``+ - * / **`` replacement, comparison replacement, unary minus and
``not`` deleted, numbers +1 and -1, ``True``/``False``, ``and``/``or``, a condition negated,
``break``/``continue`` and a loop made to run zero times.

What cosmic-ray cannot do, and this project adds on its interface
(``grader.audit.mutation_operators``, each an ``Operator`` subclass applied the same way):
it has no operator for ``+=`` -> ``=`` (``aug-assign-to-assign``) nor ``=`` -> ``+=``, no
statement deletion, no condition made always true or false (only negated), no operand or
argument swap, no receiver swap (``self``/``other``/``out``), nothing on returned tuples, no
``reversed`` or ``any``/``all`` operator, no ``@`` and no ``in``/``not in`` (neither occurs in
a region here; ``not in`` conditions are negated and made constant instead), and it cannot
insert a unary minus (its unary operators only replace or delete one that is there). Nor
can it make the mistakes that are right on the simplest inputs (issue 32): a loop run at most
once (``while`` -> ``if``, ``range(n)`` -> ``range(min(n, 1))``), an input's array written in
place (``out=``, ``+=``), ``sorted()`` or ``reversed()`` inserted, a container kept in the
module between calls, a slice one element short. Numbers
change by +1 and -1 only (so 1 becomes 0 and 2, 0 becomes 1 and -1). Its runner (a session
database, a test command per mutant, ``cosmic-ray exec``) is not used: the grader is the test,
and the audit grades the mutants as a batch. mutmut 3 was not an option: it rewrites whole
files into trampolines and drives pytest itself, with no single mutant of a region on demand.

Nothing on the grading path imports cosmic-ray: this module imports it inside its functions.
"""

from __future__ import annotations

import ast
import difflib
import functools
import random
import shutil
from collections import Counter
from collections.abc import Collection, Iterator
from copy import deepcopy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.language.parsing import parse
from grader.language.solutions import render_source, solution_blocks

COSMIC_RAY: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ReplaceBinaryOperator_Add_Sub", ("binary-add-to-sub",)),
    ("ReplaceBinaryOperator_Sub_Add", ("binary-sub-to-add",)),
    ("ReplaceBinaryOperator_Mul_Div", ("binary-mul-to-div",)),
    ("ReplaceBinaryOperator_Div_Mul", ("binary-div-to-mul",)),
    ("ReplaceBinaryOperator_Pow_Mul", ("binary-pow-to-mul",)),
    ("ReplaceComparisonOperator_Gt_GtE", ("compare-gt-to-ge",)),
    ("ReplaceComparisonOperator_GtE_Gt", ("compare-ge-to-gt",)),
    ("ReplaceComparisonOperator_Lt_LtE", ("compare-lt-to-le",)),
    ("ReplaceComparisonOperator_LtE_Lt", ("compare-le-to-lt",)),
    ("ReplaceComparisonOperator_Eq_NotEq", ("compare-eq-to-ne",)),
    ("ReplaceComparisonOperator_NotEq_Eq", ("compare-ne-to-eq",)),
    ("ReplaceComparisonOperator_Is_IsNot", ("compare-is-to-is-not",)),
    ("ReplaceComparisonOperator_IsNot_Is", ("compare-is-not-to-is",)),
    ("ReplaceUnaryOperator_Delete_USub", ("unary-drop-minus",)),
    ("ReplaceUnaryOperator_Delete_Not", ("unary-drop-not",)),
    ("NumberReplacer", ("number-plus-one", "number-minus-one")),
    ("ReplaceTrueWithFalse", ("true-to-false",)),
    ("ReplaceFalseWithTrue", ("false-to-true",)),
    ("ReplaceAndWithOr", ("and-to-or",)),
    ("ReplaceOrWithAnd", ("or-to-and",)),
    ("AddNot", ("condition-negate",)),
    ("ReplaceBreakWithContinue", ("break-to-continue",)),
    ("ReplaceContinueWithBreak", ("continue-to-break",)),
    ("ZeroIterationForLoop", ("zero-iteration-loop",)),
)
"""cosmic-ray's operators the audit uses (class name in its provider) and the audit's short,
stable name for each mutation index at a node (``NumberReplacer`` makes +1, then -1)."""

DO_NOTHING = (
    "do-nothing-pass",
    "do-nothing-return-none",
    "do-nothing-identity",
    "do-nothing-zeros",
    "do-nothing-ones",
    "do-nothing-no-closure",
)
"""The do-nothing variants' operator names, in the order they are made."""

DO_ONE_THING = "do-one-thing"
"""The kind and operator name of the stubs with one region written (``do_one_thing``)."""

SKIPPED = ("__pycache__", "*.pyc", "audit-judgements.yaml")
"""Not copied with the reference into a mutant's folder (build debris; the audit's list of
judgements is not part of a submission)."""


@dataclass(frozen=True)
class Region:
    """One ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` region of the reference, or one
    definition of a module without such regions (``definition_mutants``: no markers, so
    ``start`` and ``end`` are the lines just outside it, and it serves no item)."""

    file: str
    """Relative to the reference folder, POSIX style: ``micrograd/engine.py``."""
    start: int
    """1-based line of the BEGIN marker."""
    end: int
    """1-based line of the END marker."""
    serves: tuple[str, ...]
    """The rubric items this code is graded by; a do-nothing body must earn nothing there."""
    also: tuple[str, ...]
    """Items that also grade a part of it: a mutant killed there is not a blame leak."""
    function: str
    """The enclosing function's qualified name: ``Value.__add__``, ``build_topo``."""
    body: int = 0
    """1-based line of the first solution line (after the marker's continuation lines);
    0: the line after ``start``."""

    @property
    def assignment(self) -> str:
        return self.serves[0].split(".", 1)[0]

    @property
    def first(self) -> int:
        """The first line of the region's body."""
        return self.body or self.start + 1

    def holds(self, first: int, last: int) -> bool:
        """Do lines ``first`` to ``last`` lie strictly between the markers?"""
        return self.start < first and last < self.end


@dataclass(frozen=True)
class Mutant:
    """A copy of the reference with one region changed."""

    id: str
    """Stable, and usable as a folder name: ``micrograd-engine-L55-aug-assign-to-assign-0``."""
    kind: str
    """``mutant``, ``do-nothing`` or ``do-one-thing``."""
    region: Region
    operator: str
    line: int
    description: str
    """One line: ``engine.py:55 Value.__add__: `self.grad += out.grad` -> `...```."""
    files: dict[str, str] = field(hash=False)
    """Relative path -> the full mutated source of each changed file."""

    def write(self, reference: Path, target: Path) -> Path:
        """``reference`` copied to ``target`` (no build debris) with this mutant's files."""
        target = Path(target)
        shutil.copytree(
            reference, target, ignore=shutil.ignore_patterns(*SKIPPED), dirs_exist_ok=True
        )
        for relative, text in self.files.items():
            (target / relative).write_text(text, encoding="utf-8")
        return target


# ------------------------------------------------------------------------------------ regions


def _sources(reference: Path) -> tuple[tuple[str, str], ...]:
    """(relative path, text) of every Python file of the reference, sorted."""
    reference = Path(reference)
    return tuple(
        (path.relative_to(reference).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(reference.rglob("*.py"))
        if "__pycache__" not in path.relative_to(reference).parts
    )


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a module with its qualified name (``Class.method``, ``f.inner``)."""
    found = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    found.append((name, child))
                walk(child, name + ".")

    walk(tree, "")
    return found


def _enclosing(
    tree: ast.Module, line: int
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | None]:
    """The innermost function around ``line``, and its qualified name ('' at module level)."""
    around = [
        (name, node)
        for name, node in _functions(tree)
        if node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not around:
        return "", None
    return max(around, key=lambda pair: pair[1].lineno)


def _regions_of(relative: str, source: str) -> list[Region]:
    tree = parse(source, relative)
    return [
        Region(
            file=relative,
            start=block.start,
            end=block.end,
            serves=block.serves,
            also=block.also,
            function=_enclosing(tree, block.start)[0],
            body=block.body,
        )
        for block in solution_blocks(source, relative)
    ]


def regions(reference: Path) -> list[Region]:
    """Every solution region of the reference, file by file (sorted), in source order."""
    return [
        region
        for relative, source in _sources(reference)
        for region in _regions_of(relative, source)
    ]


# ------------------------------------------------------------------------------ description


def _slug(relative: str) -> str:
    return relative.removesuffix(".py").replace("/", "-").replace(".", "-")


def _one_line(lines: list[str], limit: int = 90) -> str:
    text = " ".join(line.strip() for line in lines if line.strip())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _program(source: str) -> str | None:
    """The program a source text stands for (None if it does not compile)."""
    try:
        tree = parse(source)
        compile(tree, "<mutant>", "exec")
    except (SyntaxError, ValueError):
        return None
    return ast.dump(tree)


@dataclass(frozen=True)
class _Place:
    """Where a region's mutants change its file: the region's enclosing function (through
    the END marker), or the whole file for a region at module level. Its text, dedented,
    is what is parsed, mutated and compared, so each parse stays small."""

    region: Region
    lines: tuple[str, ...]
    """The whole file, lines with their ends."""
    first: int
    last: int
    indent: str

    @property
    def original(self) -> list[str]:
        return list(self.lines[self.first - 1 : self.last])

    def source(self, changed: list[str]) -> str:
        """The whole file with the function's lines replaced by ``changed``."""
        return "".join([*self.lines[: self.first - 1], *changed, *self.lines[self.last :]])

    def dedented(self, changed: list[str]) -> str:
        return "".join(line[len(self.indent) :] if line.strip() else line for line in changed)

    def indented(self, text: str) -> list[str]:
        return [
            self.indent + line if line.strip() else line for line in text.splitlines(keepends=True)
        ]

    def program(self, changed: list[str]) -> str | None:
        return _program(self.dedented(changed))

    def only_inside(self, changed: list[str]) -> bool:
        """Are the function's lines outside the region (markers included) unchanged?"""
        before = self.original
        head = self.region.start - self.first + 1
        tail = len(before) - (self.region.end - self.first)
        return (
            len(changed) >= head + tail
            and changed[:head] == before[:head]
            and changed[len(changed) - tail :] == before[len(before) - tail :]
        )

    def describe(self, changed: list[str]) -> tuple[int, str]:
        """The first changed line (of the file) and a one-line description of the change."""
        before, after = self.original, changed
        matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
        edits = [op for op in matcher.get_opcodes() if op[0] != "equal"]
        i1, j1 = edits[0][1], edits[0][3]
        i2, j2 = max(op[2] for op in edits), max(op[4] for op in edits)
        line = self.first + i1
        old, new = _one_line(before[i1:i2]), _one_line(after[j1:j2])
        where = f"{self.region.file.rsplit('/', 1)[-1]}:{line} {self.region.function or '<module>'}"
        return line, f"{where}: `{old}` -> `{new or '(nothing)'}`"


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definition_place(
    region: Region, lines: tuple[str, ...], node: Definition, last: int
) -> _Place | None:
    """The place of a function or class (decorators included) through line ``last``, or
    None if its text does not dedent cleanly."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    line = lines[first - 1]
    place = _Place(region, lines, first, last, line[: len(line) - len(line.lstrip())])
    if "".join(place.indented(place.dedented(place.original))) == "".join(place.original):
        return place
    return None


def _place(region: Region, source: str, tree: ast.Module) -> _Place:
    lines = tuple(source.splitlines(keepends=True))
    _, function = _enclosing(tree, region.start)
    if function is not None:
        last = max(function.end_lineno or function.lineno, region.end)
        place = _definition_place(region, lines, function, last)
        if place is not None:
            return place
    return _Place(region, lines, 1, len(lines), "")


# ---------------------------------------------------------------------------- the operators


@functools.cache
def _operators() -> tuple[tuple[tuple[str, ...], Any], ...]:
    """(names by mutation index, operator instance) of every operator, in order."""
    from cosmic_ray.operators.provider import OperatorProvider

    from grader.audit import mutation_operators

    provider = OperatorProvider()
    found = [(names, mutation_operators.tidy(provider[name])()) for name, names in COSMIC_RAY]
    found += [((name,), operator()) for name, operator in mutation_operators.CUSTOM.items()]
    return tuple(found)


def operator_names() -> tuple[str, ...]:
    """Every mutation operator's short name, in the order mutants are made."""
    return tuple(name for names, _ in _operators() for name in names)


def _name(names: tuple[str, ...], index: int) -> str:
    return names[min(index, len(names) - 1)]


def _region_mutations(place: _Place) -> Iterator[tuple[str, list[str]]]:
    """(operator name, the function's mutated lines) for every mutation strictly inside the
    region, operator by operator, in the order of the places they apply."""
    import parso
    from cosmic_ray.ast import ast_nodes

    snippet = place.dedented(place.original)
    offset = place.first - 1
    starts = _line_starts(snippet)
    nodes = list(ast_nodes(parso.parse(snippet)))
    for names, operator in _operators():
        for node in nodes:
            for index, (start, stop) in enumerate(operator.mutation_positions(node)):
                if place.region.holds(start[0] + offset, stop[0] + offset):
                    mutated = _mutated(snippet, starts, node, operator, index)
                    if mutated != snippet:
                        yield _name(names, index), place.indented(mutated)


def _line_starts(text: str) -> list[int]:
    """The offset in ``text`` at which each line starts (parso's line 1 is index 0)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _mutated(snippet: str, starts: list[int], node: Any, operator: Any, index: int) -> str:
    """``snippet`` with ``operator``'s mutation ``index`` of ``node``: what cosmic-ray's
    ``MutationVisitor.mutate_code`` gives, without parsing ``snippet`` again for each mutant
    (most of the time a module's mutants took). The operator changes a copy of ``node`` (it
    may change the node it is given), whose parent is still ``node``'s for the operators that
    read around it; the copy's code, its prefix included, takes the place of ``node``'s."""
    parent = node.parent
    node.parent = None  # copy the node alone, not the tree it hangs in
    try:
        copy = deepcopy(node)
    finally:
        node.parent = parent
    copy.parent = parent
    replaced = operator.mutate(copy, index)
    (line, column), (end_line, end_column) = node.get_start_pos_of_prefix(), node.end_pos
    before, after = starts[line - 1] + column, starts[end_line - 1] + end_column
    code = "" if replaced is None else replaced.get_code()
    return snippet[:before] + code + snippet[after:]


# ------------------------------------------------------------------------ do-nothing bodies


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in (*function.args.posonlyargs, *function.args.args)]


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, nested functions and classes left out."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))


def _inside(node: ast.AST, region: Region) -> bool:
    return region.holds(node.lineno, node.end_lineno or node.lineno)


def _module_names(tree: ast.Module) -> set[str]:
    """Names bound at module level (imports, classes, functions, assignments)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _wrapped_returns(
    region: Region, lines: list[str], function: ast.AST, wrapper: str
) -> list[str] | None:
    """The region's body with every value it returns wrapped: ``return wrapper(value)``."""
    returns = sorted(
        (
            n
            for n in _own_nodes(function)
            if isinstance(n, ast.Return) and n.value is not None and _inside(n, region)
        ),
        key=lambda n: (n.lineno, n.col_offset),
        reverse=True,
    )
    if not returns:
        return None
    body = list(lines)
    for node in returns:
        value = node.value
        if value.lineno != value.end_lineno:
            return None  # not spliced across lines: rare, and not worth the risk
        row = value.lineno - 1
        text = body[row]
        start, end = value.col_offset, value.end_col_offset
        body[row] = f"{text[:start]}{wrapper}({text[start:end]}){text[end:]}"
    return body[region.first - 1 : region.end - 1]


def _without_closures(region: Region, lines: list[str], function: ast.AST) -> list[str] | None:
    """The region's body without its nested functions and the statements that hang them on an
    attribute (``out._backward = _backward``)."""
    nested = [
        n
        for n in ast.iter_child_nodes(function)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and _inside(n, region)
    ]
    names = {n.name for n in nested}
    hung = [
        n
        for n in ast.iter_child_nodes(function)
        if isinstance(n, ast.Assign)
        and _inside(n, region)
        and isinstance(n.value, ast.Name)
        and n.value.id in names
        and all(isinstance(t, ast.Attribute) for t in n.targets)
    ]
    if not nested or not hung:
        return None
    dropped = set()
    for node in [*nested, *hung]:
        top = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        dropped |= set(range(top, (node.end_lineno or node.lineno) + 1))
    body: list[str] = []
    for number in range(region.first, region.end):
        text = lines[number - 1]
        if number in dropped or (not text.strip() and (not body or not body[-1].strip())):
            continue
        body.append(text)
    while body and not body[-1].strip():
        body.pop()
    return body


def _idle_bodies(
    region: Region, lines: list[str], tree: ast.Module
) -> Iterator[tuple[str, list[str], str]]:
    """(operator, body lines, what the body does) of each do-nothing variant that makes sense
    for the region."""
    _, function = _enclosing(tree, region.start)
    marker = lines[region.start - 1]
    indent = marker[: len(marker) - len(marker.lstrip())]

    def body(operator: str, *statements: str) -> tuple[str, list[str], str]:
        return (
            operator,
            [f"{indent}{statement}\n" for statement in statements],
            f"body -> `{'; '.join(statements)}`",
        )

    if function is None:
        yield body("do-nothing-pass", "pass")
        return
    returns = any(
        isinstance(n, ast.Return) and n.value is not None and _inside(n, region)
        for n in _own_nodes(function)
    )
    tail = (function.end_lineno or function.lineno) < region.end
    if not returns or not tail:
        yield body("do-nothing-pass", "pass")
    if returns:
        yield body("do-nothing-return-none", "return None")
    parameters = _parameters(function)
    inputs = [p for p in parameters if p not in ("self", "cls")]
    given = inputs[0] if inputs else ("self" if "self" in parameters else None)
    if returns and given is not None:
        yield body("do-nothing-identity", f"return {given}")
    module = _module_names(tree)
    annotation = ast.unparse(function.returns) if function.returns is not None else ""
    if returns and "np" in module:
        if function.name == "backward" and len(parameters) >= 3 and "Tensor" in module:
            node = parameters[2]  # backward(self, out_grad, node): a gradient per input
            for name, make in (("zeros", "np.zeros"), ("ones", "np.ones")):
                yield body(
                    f"do-nothing-{name}",
                    f"return tuple(Tensor({make}(x.shape), requires_grad=False, "
                    f"dtype=x.dtype) for x in {node}._inputs)",
                )
        elif function.name == "forward" or "NDArray" in annotation or "ndarray" in annotation:
            for name, make in (("zeros", "np.zeros_like"), ("ones", "np.ones_like")):
                wrapped = _wrapped_returns(region, lines, function, make)
                if wrapped is not None:
                    yield (f"do-nothing-{name}", wrapped, f"every returned value v -> `{make}(v)`")
    closures = _without_closures(region, lines, function)
    if closures:
        yield ("do-nothing-no-closure", closures, f"without its closure -> `{_one_line(closures)}`")


# ------------------------------------------------------------------------------ the mutants


def _replaced_body(place: _Place, body: list[str]) -> list[str]:
    """The function's lines with the region's body replaced by ``body``."""
    region, before = place.region, place.original
    return [*before[: region.first - place.first], *body, *before[region.end - place.first :]]


@functools.lru_cache(maxsize=4)
def _all(sources: tuple[tuple[str, str], ...]) -> tuple[tuple[Mutant, ...], tuple[Mutant, ...]]:
    """(mutants, do-nothing variants) of the reference's sources."""
    changed: list[Mutant] = []
    idle: list[Mutant] = []
    for relative, source in sources:
        tree = parse(source, relative)
        lines = source.splitlines(keepends=True)
        for region in _regions_of(relative, source):
            place = _place(region, source, tree)
            marker = lines[region.start - 1]
            indent = marker[: len(marker) - len(marker.lstrip())]
            seen = {place.program(place.original)}
            lines_of = (
                f"{region.first}"
                if region.first == region.end - 1
                else f"{region.first}-{region.end - 1}"
            )
            where = f"{relative.rsplit('/', 1)[-1]}:{lines_of} {region.function or '<module>'}"
            for operator, body, summary in _idle_bodies(region, lines, tree):
                function = _replaced_body(place, body)
                program = place.program(function)
                if program in seen:
                    continue
                seen.add(program)
                idle.append(
                    Mutant(
                        id=f"{_slug(relative)}-L{region.start}-{operator}-0",
                        kind="do-nothing",
                        region=region,
                        operator=operator,
                        line=region.first,
                        description=f"{where}: {summary}",
                        files={relative: place.source(function)},
                    )
                )
            # A body of just ``pass`` did nothing, whether it is one of the variants or not.
            seen.add(place.program(_replaced_body(place, [f"{indent}pass\n"])))
            changed += _place_mutants(place, seen)
    return tuple(changed), tuple(idle)


def _place_mutants(place: _Place, seen: set[str | None]) -> Iterator[Mutant]:
    """Every mutant of ``place``'s region that compiles, changes nothing outside the region
    and is a program not in ``seen`` (each one made is added to it)."""
    relative = place.region.file
    counts: Counter[tuple[int, str]] = Counter()
    for operator, function in _region_mutations(place):
        program = place.program(function)
        if program is None or program in seen or not place.only_inside(function):
            continue
        seen.add(program)
        line, description = place.describe(function)
        number = counts[(line, operator)]
        counts[(line, operator)] += 1
        yield Mutant(
            id=f"{_slug(relative)}-L{line}-{operator}-{number}",
            kind="mutant",
            region=place.region,
            operator=operator,
            line=line,
            description=description,
            files={relative: place.source(function)},
        )


def definitions(tree: ast.Module) -> Iterator[tuple[str, ast.stmt]]:
    """(name, node) of a module's top-level functions, classes and assignments, and of the
    methods of its top-level classes (``Class.method``)."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield f"{node.name}.{inner.name}", inner
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if isinstance(targets[0], ast.Name):
                yield targets[0].id, node


def definition_mutants(relative: str, source: str, names: Collection[str]) -> list[Mutant]:
    """The mutants of the named ``definitions`` of a module that has no solution regions (the
    grader's own: ``tests/self_audit.py``), each a region from its ``def``, ``class`` or
    assignment line to its end, decorators left alone; the same operators and rules as
    ``mutants``. Name a class or some of its methods, not both: they would overlap."""
    tree = parse(source, relative)
    lines = tuple(source.splitlines(keepends=True))
    found: list[Mutant] = []
    for name, node in definitions(tree):
        if name not in names:
            continue
        last = node.end_lineno or node.lineno
        region = Region(relative, node.lineno - 1, last + 1, (), (), name)
        if isinstance(node, Definition):
            whole = _Place(region, lines, 1, len(lines), "")
            place = _definition_place(region, lines, node, last) or whole
        else:  # a top-level assignment
            place = _Place(region, lines, node.lineno, last, "")
        found += _place_mutants(place, {place.program(place.original)})
    return found


def mutants(reference: Path) -> list[Mutant]:
    """Every mutant of every region of the reference, in a fixed order (file, region,
    operator, place): each compiles and is a program unlike the reference's, any other
    mutant's and any do-nothing variant's (a body of only ``pass`` included)."""
    return list(_all(_sources(reference))[0])


def do_nothing(reference: Path) -> list[Mutant]:
    """Each region's body replaced by the smallest bodies that still run, those that make
    sense for its function (kind ``do-nothing``)."""
    return list(_all(_sources(reference))[1])


def stub_files(reference: Path) -> dict[str, str]:
    """Every Python file of the reference as the stubs have it (``grader.release.stubs``):
    each region a ``NotImplementedError``."""
    return {relative: render_source(source, relative) for relative, source in _sources(reference)}


def do_one_thing(reference: Path) -> list[Mutant]:
    """For each region, the stubs with that region alone written as the reference has it
    (kind ``do-one-thing``): partial work, one function filled in, which must earn only what
    its region's items allow (``grader.audit.audit``)."""
    return list(_one_thing(_sources(reference)))


@functools.lru_cache(maxsize=4)
def _one_thing(sources: tuple[tuple[str, str], ...]) -> tuple[Mutant, ...]:
    stubbed = {relative: render_source(source, relative) for relative, source in sources}
    made = []
    for relative, source in sources:
        for region in _regions_of(relative, source):
            where = f"{relative.rsplit('/', 1)[-1]}:{region.first} {region.function or '<module>'}"
            made.append(
                Mutant(
                    id=f"{_slug(relative)}-L{region.start}-{DO_ONE_THING}-0",
                    kind=DO_ONE_THING,
                    region=region,
                    operator=DO_ONE_THING,
                    line=region.first,
                    description=f"{where}: the stubs with this region alone written",
                    files={
                        **stubbed,
                        relative: render_source(source, relative, keep={region.start}),
                    },
                )
            )
    return tuple(made)


def sample(items: list[Mutant], size: int, seed: int) -> list[Mutant]:
    """A fixed, seeded choice of ``size`` of ``items``, spread over regions and operators:
    each next pick is, of those left in a seeded shuffle, the first whose region and operator
    were picked least so far. In the order of ``items``."""
    if size >= len(items):
        return list(items)
    pool = sorted(items, key=lambda m: m.id)
    random.Random(seed).shuffle(pool)
    regions_seen: Counter[tuple[str, int]] = Counter()
    operators_seen: Counter[str] = Counter()
    chosen: set[str] = set()
    for _ in range(max(0, size)):
        best = min(
            range(len(pool)),
            key=lambda i: (
                regions_seen[(pool[i].region.file, pool[i].region.start)]
                + operators_seen[pool[i].operator],
                i,
            ),
        )
        pick = pool.pop(best)
        chosen.add(pick.id)
        regions_seen[(pick.region.file, pick.region.start)] += 1
        operators_seen[pick.operator] += 1
    return [m for m in items if m.id in chosen]


def main() -> None:
    """Print the number of mutants per operator and per file (``python -m
    grader.audit.mutants [REFERENCE]``)."""
    import sys

    from grader.layout import DEFAULT_REFERENCE

    reference = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_REFERENCE
    changed, idle = mutants(reference), do_nothing(reference)
    for title, counter in (
        ("operator", Counter(m.operator for m in [*changed, *idle])),
        ("file", Counter(m.region.file for m in [*changed, *idle])),
    ):
        print(f"by {title}:")
        for key, count in sorted(counter.items(), key=lambda pair: (-pair[1], pair[0])):
            print(f"  {count:5d}  {key}")
    print(
        f"{len(changed)} mutants and {len(idle)} do-nothing variants "
        f"over {len(regions(reference))} regions"
    )


if __name__ == "__main__":
    main()
