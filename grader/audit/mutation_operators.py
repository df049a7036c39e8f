"""The mutation operators cosmic-ray lacks, written on its interface (``grader.audit.mutants``).

Each is a ``cosmic_ray.operators.operator.Operator`` on parso nodes, like cosmic-ray's own:
``mutation_positions(node)`` yields one position per mutation it can make at that node, and
``mutate(node, index)`` returns the node that replaces it, so
``cosmic_ray.mutating.MutationVisitor.mutate_code(source, operator, occurrence)`` applies
the n-th of them to a source text. A rewritten node is replaced by a leaf holding its new code
(cosmic-ray's ``NumberReplacer`` does the same): only the code of the tree is read afterwards.

This module imports cosmic-ray (the optional ``audit`` extra), so nothing on the grading path
imports it: ``grader.audit.mutants`` does, inside its functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy
from cosmic_ray.operators.operator import Example, Operator
from parso.python import tree
from parso.tree import BaseNode, NodeOrLeaf

Position = tuple[tuple[int, int], tuple[int, int]]

AUGMENTED = frozenset({"+=", "-=", "*=", "/=", "//=", "%=", "**=", "@="})
NONCOMMUTATIVE = frozenset({"-", "/", "//", "%", "**", "@"})
RECEIVERS = (("self", "other", "out"), ("node", "parent"), ("a", "b"))
"""Names that stand for one another: a mutant uses the wrong one of a set (that is in scope)."""
DELETABLE = frozenset({"expr_stmt", "return_stmt", "atom_expr", "power", "del_stmt"})
"""Simple statements that statement deletion replaces by ``pass``."""


def _span(node: NodeOrLeaf) -> Position:
    return node.start_pos, node.end_pos


def _code(node: NodeOrLeaf) -> str:
    return node.get_code(include_prefix=False)


def _prefix(node: NodeOrLeaf) -> str:
    first = node.get_first_leaf() if isinstance(node, BaseNode) else node
    return first.prefix


def _leaf(code: str, like: NodeOrLeaf) -> tree.Name:
    """A leaf holding ``code`` in place of ``like`` (with its prefix: the same layout)."""
    leaf = tree.Name(code, like.start_pos, prefix=_prefix(like))
    leaf.parent = like.parent
    return leaf


def _replace(node: BaseNode, child: NodeOrLeaf, code: str) -> BaseNode:
    """``node`` with its child ``child`` rewritten as ``code``."""
    node.children[node.children.index(child)] = _leaf(code, child)
    return node


def _is(node: NodeOrLeaf, kind: str, value: str | None = None) -> bool:
    return node.type == kind and (value is None or getattr(node, "value", None) == value)


class AugAssignToAssign(Operator):
    """``x += y`` becomes ``x = y``: a gradient overwritten instead of accumulated."""

    def mutation_positions(self, node):
        if (
            node.type == "expr_stmt"
            and len(node.children) == 3
            and _is(node.children[1], "operator")
            and node.children[1].value in AUGMENTED
        ):
            yield _span(node.children[1])

    def mutate(self, node, index):
        node.children[1].value = "="
        return node

    @classmethod
    def examples(cls):
        return (Example("x.grad += y", "x.grad = y"),)


class AssignToAugAssign(Operator):
    """``x.grad = y`` or ``x[k] = y`` becomes ``+=``: added to what was there."""

    def mutation_positions(self, node):
        if (
            node.type == "expr_stmt"
            and len(node.children) == 3
            and _is(node.children[1], "operator", "=")
        ):
            target = node.children[0]
            if target.type in ("atom_expr", "power") and target.children[-1].type == "trailer":
                trailer = target.children[-1]
                if trailer.children[0] == "[" or (
                    trailer.children[0] == "." and trailer.children[1].value == "grad"
                ):
                    yield _span(node.children[1])

    def mutate(self, node, index):
        node.children[1].value = "+="
        return node

    @classmethod
    def examples(cls):
        return (Example("x.grad = y", "x.grad += y"), Example("d[k] = y", "d[k] += y"))


class DeleteStatement(Operator):
    """A simple statement (assignment, call, return) replaced by ``pass``."""

    def mutation_positions(self, node):
        if (
            node.type == "simple_stmt"
            and len(node.children) == 2
            and (node.children[0].type in DELETABLE)
        ):
            yield _span(node.children[0])

    def mutate(self, node, index):
        return _replace(node, node.children[0], "pass")

    @classmethod
    def examples(cls):
        return (Example("x = 1\n", "pass\n"), Example("return x\n", "pass\n"))


def _conditions(node: NodeOrLeaf) -> list[NodeOrLeaf]:
    """The conditions of an ``if``/``elif``, ``while``, ternary or comprehension ``if``."""
    if node.type == "if_stmt":
        found = [
            node.children[i + 1]
            for i, child in enumerate(node.children)
            if _is(child, "keyword") and child.value in ("if", "elif")
        ]
    elif node.type == "while_stmt":
        found = [node.children[1]]
    elif node.type == "test" and len(node.children) == 5:  # a if cond else b
        found = [node.children[2]]
    elif node.type in ("comp_if", "old_comp_if"):
        found = [node.children[1]]
    else:
        return []
    return [c for c in found if not (_is(c, "keyword") and c.value in ("True", "False"))]


class _Condition(Operator):
    constant = "True"

    def mutation_positions(self, node):
        for condition in _conditions(node):
            yield _span(condition)

    def mutate(self, node, index):
        return _replace(node, _conditions(node)[index], self.constant)

    @classmethod
    def examples(cls):
        return (
            Example("if x > 0: pass", f"if {cls.constant}: pass"),
            Example("a if c else b", f"a if {cls.constant} else b"),
        )


class ConditionTrue(_Condition):
    """A condition made always true."""

    constant = "True"


class ConditionFalse(_Condition):
    """A condition made always false."""

    constant = "False"


class SwapOperands(Operator):
    """The operands of a non-commutative binary operator swapped: ``a - b`` -> ``b - a``."""

    def mutation_positions(self, node):
        if (
            node.type in ("arith_expr", "term", "power")
            and len(node.children) >= 3
            and _is(node.children[1], "operator")
            and node.children[1].value in NONCOMMUTATIVE
            and (_code(node.children[0]) != _code(node.children[2]))
        ):
            yield _span(node)

    def mutate(self, node, index):
        left, op, right = node.children[:3]
        moved = _code(right)
        if op.value == "**" and right.type == "factor":  # -1 ** x would be -(1 ** x)
            moved = f"({moved})"
        code = (
            moved
            + _prefix(op)
            + op.value
            + _prefix(right)
            + _code(left)
            + "".join(child.get_code() for child in node.children[3:])
        )
        return _leaf(code, node)

    @classmethod
    def examples(cls):
        return (Example("x = a - b", "x = b - a"), Example("x = a ** -1", "x = (-1) ** a"))


def _arguments(trailer: NodeOrLeaf) -> list[NodeOrLeaf]:
    """The arguments of a call trailer ``(a, b, k=c)``, commas left out."""
    if trailer.type != "trailer" or trailer.children[0] != "(" or len(trailer.children) != 3:
        return []
    inner = trailer.children[1]
    if inner.type != "arglist":
        return [inner]
    return [child for child in inner.children if not _is(child, "operator", ",")]


LITERALS = frozenset({"number", "string", "strings", "fstring"})


def _positional(argument: NodeOrLeaf) -> bool:
    """A positional argument that is not a constant (``f(x, -1)`` swapped is rarely a
    plausible mistake, and ``np.swapaxes(x, -1, -2)`` swapped is the same call)."""
    if argument.type in ("argument", "star_expr") or argument.type in LITERALS:
        return False
    if argument.type == "factor" and argument.children[1].type == "number":
        return False
    return not (_is(argument, "keyword") and argument.value in ("None", "True", "False"))


def _argument_pairs(node: NodeOrLeaf) -> list[tuple[NodeOrLeaf, NodeOrLeaf]]:
    arguments = _arguments(node)
    return [
        (a, b)
        for a, b in zip(arguments, arguments[1:], strict=False)
        if _positional(a) and _positional(b) and _code(a) != _code(b)
    ]


class SwapArguments(Operator):
    """Two adjacent positional arguments of a call swapped, constants left out:
    ``f(a, b)`` -> ``f(b, a)``."""

    def mutation_positions(self, node):
        for a, b in _argument_pairs(node):
            yield a.start_pos, b.end_pos

    def mutate(self, node, index):
        a, b = _argument_pairs(node)[index]
        arglist = node.children[1]
        first, second = arglist.children.index(a), arglist.children.index(b)
        arglist.children[first], arglist.children[second] = _leaf(_code(b), a), _leaf(_code(a), b)
        return node

    @classmethod
    def examples(cls):
        return (Example("f(a, b, k=c)", "f(b, a, k=c)"),)


def _enclosing_functions(leaf: NodeOrLeaf) -> list[tree.Function]:
    found = []
    node = leaf.parent
    while node is not None:
        if node.type in ("funcdef", "lambdef"):
            found.append(node)
        node = node.parent
    return found


def _bound_in(function: NodeOrLeaf, name: str, before: int) -> bool:
    """Is ``name`` a parameter of ``function``, or bound in its own body before that line?"""
    if function.type == "funcdef" and any(p.name.value == name for p in function.get_params()):
        return True
    return any(
        node.type == "name"
        and node.value == name
        and node.start_pos[0] < before
        and node.is_definition()
        for node in _own_nodes(function)
    )


def _own_nodes(function: NodeOrLeaf) -> Iterator[NodeOrLeaf]:
    """The nodes of a function's body, nested functions, lambdas and classes left out."""
    stack = list(getattr(function, "children", []))
    while stack:
        node = stack.pop()
        if node.type not in ("funcdef", "lambdef", "classdef"):
            yield node
            stack.extend(getattr(node, "children", []))


def _receiver_choices(leaf: NodeOrLeaf) -> list[str]:
    """The other names of ``leaf``'s set in scope where it is used (none if it is not a use
    of a receiver name)."""
    if leaf.type != "name" or leaf.parent is None:
        return []
    if leaf.parent.type == "trailer" and leaf.parent.children[0] == ".":
        return []  # x.self is an attribute, not the name
    group = next((names for names in RECEIVERS if leaf.value in names), ())
    if not group or leaf.is_definition():
        return []
    parent = leaf.parent
    if parent.type == "argument" and parent.children[0] is leaf:  # f(self=...)
        return []
    if parent.type == "param":
        return []
    line = leaf.start_pos[0]
    scopes = _enclosing_functions(leaf)
    at = group.index(leaf.value)
    others = [*group[at + 1 :], *group[:at]]  # the next ones of the set first, cyclically
    return [name for name in others if any(_bound_in(scope, name, line) for scope in scopes)][:1]


class SwapReceiver(Operator):
    """One name of a set that stand for one another (``self``/``other``/``out``,
    ``node``/``parent``, ``a``/``b``) replaced by another of the set that is in scope: the
    next one in the set's order (cyclically), so each use makes one mutant."""

    def mutation_positions(self, node):
        for _ in _receiver_choices(node):
            yield _span(node)

    def mutate(self, node, index):
        return _leaf(_receiver_choices(node)[index], node)

    @classmethod
    def examples(cls):
        return (
            Example(
                "def f(self, other):\n    self.grad += 1\n",
                "def f(self, other):\n    other.grad += 1\n",
            ),
        )


def _returned_elements(node: NodeOrLeaf) -> tuple[NodeOrLeaf | None, list[NodeOrLeaf]]:
    """(the value, its elements) of ``return a, b`` or ``return (a, b)``; no value if not."""
    if node.type != "return_stmt" or len(node.children) != 2:
        return None, []
    value = node.children[1]
    items = value
    if value.type == "atom" and value.children[0] == "(" and len(value.children) == 3:
        items = value.children[1]
        if items.type != "testlist_comp" or any(
            c.type in ("comp_for", "sync_comp_for") for c in items.children
        ):
            return None, []
    elif value.type not in ("testlist", "testlist_star_expr"):
        return None, []
    elements = [c for c in items.children if not _is(c, "operator", ",")]
    return (value, elements) if len(elements) >= 2 else (None, [])


def _tuple_code(elements: list[str]) -> str:
    return "(" + ", ".join(elements) + ("," if len(elements) == 1 else "") + ")"


class TupleDrop(Operator):
    """One element of a returned tuple dropped: ``return a, b`` -> ``return (a,)``."""

    def mutation_positions(self, node):
        for element in _returned_elements(node)[1]:
            yield _span(element)

    def mutate(self, node, index):
        value, elements = _returned_elements(node)
        kept = [_code(e) for i, e in enumerate(elements) if i != index]
        return _replace(node, value, _tuple_code(kept))

    @classmethod
    def examples(cls):
        return (
            Example("return a, b", "return (b,)"),
            Example("return a, b", "return (a,)", occurrence=1),
        )


class TupleReorder(Operator):
    """Two adjacent elements of a returned tuple swapped: ``return a, b`` -> ``return (b, a)``."""

    def mutation_positions(self, node):
        elements = _returned_elements(node)[1]
        for a, b in zip(elements, elements[1:], strict=False):
            if _code(a) != _code(b):
                yield a.start_pos, b.end_pos

    def mutate(self, node, index):
        value, elements = _returned_elements(node)
        codes = [_code(e) for e in elements]
        pairs = [i for i in range(len(codes) - 1) if codes[i] != codes[i + 1]]
        i = pairs[index]
        codes[i], codes[i + 1] = codes[i + 1], codes[i]
        return _replace(node, value, _tuple_code(codes))

    @classmethod
    def examples(cls):
        return (Example("return a, b", "return (b, a)"),)


def _sole_argument(call: NodeOrLeaf, function: str) -> NodeOrLeaf | None:
    """``x`` of a call spelled ``function(x)``."""
    if (
        call.type == "atom_expr"
        and len(call.children) == 2
        and _is(call.children[0], "name", function)
    ):
        trailer = call.children[1]
        if (
            trailer.children[0] == "("
            and len(trailer.children) == 3
            and (trailer.children[1].type not in ("arglist", "argument"))
        ):
            return trailer.children[1]
    return None


def _iterable(node: NodeOrLeaf, kinds: tuple[str, ...]) -> NodeOrLeaf | None:
    """What a ``for`` statement or a comprehension's ``for`` (of ``kinds``) iterates over."""
    return node.children[3] if node.type in kinds else None


class DropReversed(Operator):
    """``for x in reversed(y)`` -> ``for x in y``."""

    def mutation_positions(self, node):
        iterable = _iterable(node, ("for_stmt",))
        if iterable is not None and _sole_argument(iterable, "reversed") is not None:
            yield _span(iterable)

    def mutate(self, node, index):
        iterable = node.children[3]
        return _replace(node, iterable, _code(_sole_argument(iterable, "reversed")))

    @classmethod
    def examples(cls):
        return (Example("for x in reversed(y): pass", "for x in y: pass"),)


def _calls(node: NodeOrLeaf, functions: frozenset[str]) -> bool:
    """Is ``node`` a call ``f(...)`` of one of ``functions``?"""
    return (
        node.type == "atom_expr"
        and len(node.children) == 2
        and node.children[0].type == "name"
        and node.children[0].value in functions
        and node.children[1].children[0] == "("
    )


class _WrapIterable(Operator):
    """What a loop (of ``kinds``) iterates over, wrapped in a call to ``wrapper``, unless it
    is one already or a call of ``pointless`` (where the wrapper changes nothing or always
    fails)."""

    wrapper = "reversed"
    kinds: tuple[str, ...] = ("for_stmt",)
    pointless: frozenset[str] = frozenset()

    def mutation_positions(self, node):
        iterable = _iterable(node, self.kinds)
        if (
            iterable is not None
            and _sole_argument(iterable, self.wrapper) is None
            and not _calls(iterable, self.pointless)
        ):
            yield _span(iterable)

    def mutate(self, node, index):
        iterable = node.children[3]
        return _replace(node, iterable, f"{self.wrapper}({_code(iterable)})")


class AddReversed(_WrapIterable):
    """``for x in y`` -> ``for x in reversed(y)``."""

    wrapper, kinds = "reversed", ("for_stmt",)

    @classmethod
    def examples(cls):
        return (Example("for x in y: pass", "for x in reversed(y): pass"),)


class _Builtin(Operator):
    source = "any"
    target = "all"

    def mutation_positions(self, node):
        if (
            _is(node, "name", self.source)
            and node.parent is not None
            and (node.parent.type in ("atom_expr", "power"))
            and node.parent.children[0] is node
        ):
            following = node.parent.children[1]
            if following.type == "trailer" and following.children[0] == "(":
                yield _span(node)

    def mutate(self, node, index):
        node.value = self.target
        return node

    @classmethod
    def examples(cls):
        return (Example(f"{cls.source}(x)", f"{cls.target}(x)"),)


class AnyToAll(_Builtin):
    """``any(...)`` -> ``all(...)``."""

    source, target = "any", "all"


class AllToAny(_Builtin):
    """``all(...)`` -> ``any(...)``."""

    source, target = "all", "any"


def _negatable(node: NodeOrLeaf) -> NodeOrLeaf | None:
    """What unary-minus insertion negates at ``node``: a gradient contribution, the value
    added by ``x += v``, or a value a ``backward`` function returns (not a tuple, a bare name,
    a constant or one already negated)."""
    if (
        node.type == "expr_stmt"
        and len(node.children) == 3
        and _is(node.children[1], "operator", "+=")
    ):
        return node.children[2]
    if node.type == "return_stmt" and len(node.children) == 2:
        function = next(iter(_enclosing_functions(node)), None)
        value = node.children[1]
        if function is None or function.type != "funcdef" or function.name.value != "backward":
            return None
        if value.type in ("name", "keyword", "number", "string", "testlist", "factor") or (
            _returned_elements(node)[0] is not None
        ):
            return None
        return value
    return None


class InsertUnaryMinus(Operator):
    """A unary minus put in front of a gradient contribution: ``x += -(v)``, or
    ``return -(v)`` in a ``backward`` function."""

    def mutation_positions(self, node):
        value = _negatable(node)
        if value is not None:
            yield _span(value)

    def mutate(self, node, index):
        value = _negatable(node)
        return _replace(node, value, f"-({_code(value)})")

    @classmethod
    def examples(cls):
        return (
            Example("x += y * z", "x += -(y * z)"),
            Example(
                "def backward(g):\n    return g * 2\n", "def backward(g):\n    return -(g * 2)\n"
            ),
        )


# ------------------------------------------------------------------------------------------
# The contract's operators: a loop run once, an input written in place, an order imposed,
# state kept between calls, a slice one element short. Each makes a mistake that is right on
# the simplest inputs (one prepended axis, a fresh process, one call), so a rubric whose draws
# stop there lets it through.


class LoopToCondition(Operator):
    """A loop run at most once, as an ``if`` would: ``while c:`` -> ``if c:``, and
    ``range(n)`` -> ``range(min(n, 1))`` (``x.sum(axis=tuple(range(extra)))`` then sums one
    prepended axis of several)."""

    def mutation_positions(self, node):
        if node.type == "while_stmt" or _sole_argument(node, "range") is not None:
            yield _span(node.children[0])

    def mutate(self, node, index):
        if node.type == "while_stmt":
            return _replace(node, node.children[0], "if")
        count = _sole_argument(node, "range")
        _replace(node.children[1], count, f"min({_code(count)}, 1)")
        return node

    @classmethod
    def examples(cls):
        return (
            Example("while s:\n    s.pop()\n", "if s:\n    s.pop()\n"),
            Example("g.sum(axis=tuple(range(n)))", "g.sum(axis=tuple(range(min(n, 1))))"),
        )


ARRAY_MODULES = frozenset({"np", "numpy", "array_api"})
"""Names numpy goes by in a reference (needle's ``array_api`` is numpy)."""
ARRAY_PARAMETERS = frozenset({"forward", "compute"})
"""Methods whose parameters are their inputs' arrays (babygrad's ``forward``, needle's
``compute``)."""


def _is_data(node: NodeOrLeaf) -> bool:
    """``x.data``: what a tensor or value holds."""
    if node.type not in ("atom_expr", "power") or node.children[-1].type != "trailer":
        return False
    trailer = node.children[-1]
    return trailer.children[0] == "." and _is(trailer.children[1], "name", "data")


def _items(node: NodeOrLeaf) -> list[NodeOrLeaf]:
    """The elements of ``a, b`` (commas left out), or ``[node]``."""
    if node.type in ("testlist_star_expr", "exprlist", "testlist"):
        return [c for c in node.children if not _is(c, "operator", ",")]
    return [node]


def _bindings(function: tree.Function) -> Iterator[tuple[NodeOrLeaf, NodeOrLeaf]]:
    """(target, value) of each ``a = x`` and ``a, b = x, y`` of the function's own body."""
    for node in _own_nodes(function):
        if (
            node.type == "expr_stmt"
            and len(node.children) == 3
            and _is(node.children[1], "operator", "=")
        ):
            targets, values = _items(node.children[0]), _items(node.children[2])
            if len(targets) == len(values):
                yield from zip(targets, values, strict=True)


def _held(function: tree.Function) -> set[str]:
    """Names of ``function`` that hold an input's array: the parameters of a ``forward``,
    and names bound to a ``.data`` (``g = out_grad.data``; ``x, y = a.data, b.data``)."""
    held = {t.value for t, v in _bindings(function) if _is(t, "name") and _is_data(v)}
    if function.name.value in ARRAY_PARAMETERS:
        held |= {p.name.value for p in function.get_params()} - {"self", "cls"}
    return held


def _holds_input(node: NodeOrLeaf, expression: NodeOrLeaf) -> bool:
    """Is ``expression`` (at ``node``) an input's array, or what a tensor holds?"""
    if _is_data(expression):
        return True
    function = next((f for f in _enclosing_functions(node) if f.type == "funcdef"), None)
    return function is not None and _is(expression, "name") and expression.value in _held(function)


def _ufunc_call(node: NodeOrLeaf) -> NodeOrLeaf | None:
    """The call trailer of ``np.f(x, ...)``, ``f`` a ufunc (which takes ``out=``), ``x`` an
    input's array, and no ``out=`` given."""
    if node.type != "atom_expr" or len(node.children) != 3:
        return None
    module, attribute, call = node.children
    if not (
        module.type == "name"
        and module.value in ARRAY_MODULES
        and attribute.children[0] == "."
        and isinstance(getattr(numpy, attribute.children[1].value, None), numpy.ufunc)
    ):
        return None
    arguments = _arguments(call)
    keywords = [a.children[0].value for a in arguments if a.type == "argument"]
    if not arguments or "out" in keywords or not _holds_input(node, arguments[0]):
        return None
    return call


class _WhereFound(Operator):
    """One mutant at each node where ``found`` finds what the mutant changes."""

    def found(self, node: NodeOrLeaf) -> Any:
        raise NotImplementedError

    def mutation_positions(self, node):
        if self.found(node) is not None:
            yield _span(node)


class InPlaceOut(_WhereFound):
    """A ufunc that writes its result into its first argument, an input's array:
    ``np.exp(a)`` -> ``np.exp(a, out=a)``."""

    found = staticmethod(_ufunc_call)

    def mutate(self, node, index):
        call = self.found(node)
        target = _code(_arguments(call)[0])
        return _replace(node, call, f"({_code(call.children[1])}, out={target})")

    @classmethod
    def examples(cls):
        return (
            Example(
                "def forward(self, a):\n    return np.maximum(a, 0)\n",
                "def forward(self, a):\n    return np.maximum(a, 0, out=a)\n",
            ),
            Example("y = np.sign(a.data)", "y = np.sign(a.data, out=a.data)"),
        )


AUGMENTABLE = frozenset({"+", "-", "*", "/", "**", "@"})


def _augmentable(node: NodeOrLeaf) -> tuple[str, NodeOrLeaf] | None:
    """(what is left of the statement once the value is computed, the value ``x op y``) of
    ``v = x op y`` or ``return x op y``, ``x`` an input's array."""
    if node.type == "return_stmt" and len(node.children) == 2:
        rest, value = "return", node.children[1]
    elif (
        node.type == "expr_stmt"
        and len(node.children) == 3
        and _is(node.children[1], "operator", "=")
    ):
        rest, value = f"{_code(node.children[0])} =", node.children[2]
    else:
        return None
    if (
        value.type in ("arith_expr", "term", "power")
        and len(value.children) == 3
        and _is(value.children[1], "operator")
        and value.children[1].value in AUGMENTABLE
        and _holds_input(node, value.children[0])
    ):
        return rest, value
    return None


class InPlaceAugment(_WhereFound):
    """An input's array updated in place and returned: ``return a + b`` -> ``a += b;
    return a``, ``v = a * b`` -> ``a *= b; v = a``."""

    found = staticmethod(_augmentable)

    def mutate(self, node, index):
        rest, value = self.found(node)
        left, op, right = (_code(child) for child in value.children)
        return _leaf(f"{left} {op}= {right}; {rest} {left}", node)

    @classmethod
    def examples(cls):
        return (
            Example(
                "def forward(self, a, b):\n    return a + b\n",
                "def forward(self, a, b):\n    a += b; return a\n",
            ),
            Example(
                "def backward(self, out_grad, node):\n    g = out_grad.data\n    v = g * 2\n",
                "def backward(self, out_grad, node):\n    g = out_grad.data\n    g *= 2; v = g\n",
            ),
        )


class InsertSorted(_WrapIterable):
    """What a loop or a comprehension iterates over, sorted: ``for axis in axes`` -> ``for
    axis in sorted(axes)``."""

    wrapper, kinds = "sorted", ("for_stmt", "sync_comp_for")
    pointless = frozenset({"sorted", "range", "enumerate"})  # in order already

    @classmethod
    def examples(cls):
        return (
            Example("for x in y: pass", "for x in sorted(y): pass"),
            Example("[f(x) for x in y]", "[f(x) for x in sorted(y)]"),
        )


class InsertReversed(_WrapIterable):
    """What a comprehension iterates over, reversed (``add-reversed`` does ``for``
    statements): ``[f(x) for x in y]`` -> ``[f(x) for x in reversed(y)]``."""

    wrapper, kinds = "reversed", ("sync_comp_for",)
    pointless = frozenset({"reversed", "enumerate", "zip", "map", "filter", "iter"})  # fails

    @classmethod
    def examples(cls):
        return (Example("[f(x) for x in y]", "[f(x) for x in reversed(y)]"),)


def _container(node: NodeOrLeaf) -> NodeOrLeaf | None:
    """The container a function makes afresh in ``name = [...]``, ``{...}``, ``set()``,
    ``list()`` or ``dict()`` (not a comprehension)."""
    if (
        node.type != "expr_stmt"
        or len(node.children) != 3
        or not _is(node.children[0], "name")
        or not _is(node.children[1], "operator", "=")
        or not any(f.type == "funcdef" for f in _enclosing_functions(node))
    ):
        return None
    value = node.children[2]
    if value.type == "atom" and value.children[0] in ("[", "{"):
        inner = value.children[1] if len(value.children) == 3 else None
        made = inner is None or not any(
            c.type in ("sync_comp_for", "comp_for") for c in getattr(inner, "children", [])
        )
        return value if made else None
    if (
        value.type == "atom_expr"
        and len(value.children) == 2
        and _is(value.children[0], "name")
        and value.children[0].value in ("set", "list", "dict")
        and value.children[1].children[0] == "("
        and len(value.children[1].children) == 2
    ):
        return value
    return None


class KeepState(_WhereFound):
    """A container made once and kept in the module between calls, as a module-level or a
    default-argument one is: ``seen = set()`` -> ``seen = globals().setdefault("_kept_seen",
    set())``."""

    found = staticmethod(_container)

    def mutate(self, node, index):
        value = self.found(node)
        name = node.children[0].value
        return _replace(node, value, f'globals().setdefault("_kept_{name}", {_code(value)})')

    @classmethod
    def examples(cls):
        return (
            Example(
                "def f(root):\n    seen = {id(root)}\n",
                'def f(root):\n    seen = globals().setdefault("_kept_seen", {id(root)})\n',
            ),
        )


def _slice_parts(node: NodeOrLeaf) -> tuple[NodeOrLeaf | None, NodeOrLeaf | None] | None:
    """(start, stop) of a slice ``x[start:stop]`` (either may be missing), or None."""
    if _is(node, "operator", ":") and node.parent is not None:
        parent = node.parent
        inside = parent.type == "subscriptlist" or (
            parent.type == "trailer" and parent.children[0] == "["
        )
        return (None, None) if inside else None
    if node.type != "subscript":
        return None
    colon = next(i for i, c in enumerate(node.children) if _is(c, "operator", ":"))
    start = node.children[0] if colon == 1 else None
    after = node.children[colon + 1 : colon + 2]
    stop = after[0] if after and after[0].type != "sliceop" else None
    return start, stop


def _number(node: NodeOrLeaf | None) -> int | None:
    """The value of an integer literal ``3`` or ``-3``."""
    if node is not None and node.type == "factor" and _is(node.children[0], "operator", "-"):
        magnitude = _number(node.children[1])
        return None if magnitude is None else -magnitude
    if node is not None and node.type == "number" and node.value.isdigit():
        return int(node.value)
    return None


def _moved_in(bound: NodeOrLeaf | None, step: int) -> str | None:
    """A slice bound one element further in (``step`` +1 for the start, -1 for the stop),
    or None where that would not drop an element (``x[-1:]``, ``x[:0]``)."""
    if bound is None:
        return "1" if step > 0 else "-1"
    number = _number(bound)
    if number is None:
        return f"{_code(bound)} {'+' if step > 0 else '-'} 1"
    if step > 0:
        return None if number == -1 else str(number + 1)  # x[0:] is all of x[-1:] and more
    return None if number == 0 else str(number - 1)  # x[:0] is empty already


class _SliceDrop(_WhereFound):
    end = 0
    """0: the slice starts one element later; 1: it stops one element earlier."""

    def found(self, node: NodeOrLeaf) -> str | None:
        """The slice's bound moved in, if it has one that can be."""
        parts = _slice_parts(node)
        if parts is None:
            return None
        return _moved_in(parts[self.end], -1 if self.end else 1)

    def mutate(self, node, index):
        moved = self.found(node)
        start, stop = _slice_parts(node)
        if self.end:
            stop_code, start_code = moved, "" if start is None else _code(start)
        else:
            start_code, stop_code = moved, "" if stop is None else _code(stop)
        rest = (
            ""
            if node.type != "subscript"
            else "".join(c.get_code() for c in node.children if c.type == "sliceop")
        )
        return _leaf(f"{start_code}:{stop_code}{rest}", node)


class SliceDropFirst(_SliceDrop):
    """A slice without its first element: ``x[a:b]`` -> ``x[a + 1:b]``, ``x[:]`` ->
    ``x[1:]``."""

    end = 0

    @classmethod
    def examples(cls):
        return (Example("y = x[:n]", "y = x[1:n]"), Example("y = x[2:]", "y = x[3:]"))


class SliceDropLast(_SliceDrop):
    """A slice without its last element: ``x[a:b]`` -> ``x[a:b - 1]``, ``x[:]`` ->
    ``x[:-1]``."""

    end = 1

    @classmethod
    def examples(cls):
        return (
            Example("y = x[np.newaxis, :]", "y = x[np.newaxis, :-1]"),
            Example("y = x[k:-1]", "y = x[k:-2]"),
        )


def tidy(operator: type[Operator]) -> type[Operator]:
    """cosmic-ray's ``NumberReplacer`` writes its new number with a prefix of one space
    (``x[0]`` -> ``x[ 1]``): the same operator, keeping the number's own prefix."""
    if operator.__name__ != "NumberReplacer":
        return operator

    class TidyNumberReplacer(operator):
        def mutate(self, node, index):
            mutated = super().mutate(node, index)
            mutated.value, mutated.prefix = mutated.value.strip(), node.prefix
            return mutated

    return TidyNumberReplacer


CUSTOM: dict[str, type[Operator]] = {
    "aug-assign-to-assign": AugAssignToAssign,
    "assign-to-aug-assign": AssignToAugAssign,
    "delete-statement": DeleteStatement,
    "condition-true": ConditionTrue,
    "condition-false": ConditionFalse,
    "swap-operands": SwapOperands,
    "swap-arguments": SwapArguments,
    "swap-receiver": SwapReceiver,
    "tuple-drop": TupleDrop,
    "tuple-reorder": TupleReorder,
    "drop-reversed": DropReversed,
    "add-reversed": AddReversed,
    "any-to-all": AnyToAll,
    "all-to-any": AllToAny,
    "insert-unary-minus": InsertUnaryMinus,
    "loop-to-condition": LoopToCondition,
    "in-place-out": InPlaceOut,
    "in-place-augment": InPlaceAugment,
    "insert-sorted": InsertSorted,
    "insert-reversed": InsertReversed,
    "keep-state": KeepState,
    "slice-drop-first": SliceDropFirst,
    "slice-drop-last": SliceDropLast,
}
"""Short, stable name -> operator, in the order mutants are made."""


def examples() -> Iterator[tuple[str, Example]]:
    """Every operator's examples, for the project's tests."""
    for name, operator in CUSTOM.items():
        for example in operator.examples():
            yield name, example
