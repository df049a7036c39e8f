"""The mutation operators cosmic-ray lacks, written on its interface (``grader.workflows.mutants``).

Each is a ``cosmic_ray.operators.operator.Operator`` on parso nodes, like cosmic-ray's own:
``mutation_positions(node)`` yields one position per mutation it can make at that node, and
``mutate(node, index)`` returns the node that replaces it, so
``cosmic_ray.mutating.MutationVisitor.mutate_code(source, operator, occurrence)`` applies
the n-th of them to a source text. A rewritten node is replaced by a leaf holding its new code
(cosmic-ray's ``NumberReplacer`` does the same): only the code of the tree is read afterwards.

This module imports cosmic-ray (the optional ``audit`` extra), so nothing on the grading path
imports it: ``grader.workflows.mutants`` does, inside its functions.
"""

from __future__ import annotations

from collections.abc import Iterator

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
        return []
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
    stack = list(getattr(function, "children", []))
    while stack:
        node = stack.pop()
        if node.type == "name":
            if node.value == name and node.start_pos[0] < before and node.is_definition():
                return True
        elif node.type not in ("funcdef", "lambdef", "classdef"):
            stack.extend(getattr(node, "children", []))
    return False


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


def _reversed_argument(iterable: NodeOrLeaf) -> NodeOrLeaf | None:
    """``x`` of an iterable spelled ``reversed(x)``."""
    if (
        iterable.type == "atom_expr"
        and len(iterable.children) == 2
        and _is(iterable.children[0], "name", "reversed")
    ):
        trailer = iterable.children[1]
        if (
            trailer.children[0] == "("
            and len(trailer.children) == 3
            and (trailer.children[1].type not in ("arglist", "argument"))
        ):
            return trailer.children[1]
    return None


class DropReversed(Operator):
    """``for x in reversed(y)`` -> ``for x in y``."""

    def mutation_positions(self, node):
        if node.type == "for_stmt" and _reversed_argument(node.children[3]) is not None:
            yield _span(node.children[3])

    def mutate(self, node, index):
        iterable = node.children[3]
        return _replace(node, iterable, _code(_reversed_argument(iterable)))

    @classmethod
    def examples(cls):
        return (Example("for x in reversed(y): pass", "for x in y: pass"),)


class AddReversed(Operator):
    """``for x in y`` -> ``for x in reversed(y)``."""

    def mutation_positions(self, node):
        if node.type == "for_stmt" and _reversed_argument(node.children[3]) is None:
            yield _span(node.children[3])

    def mutate(self, node, index):
        iterable = node.children[3]
        return _replace(node, iterable, f"reversed({_code(iterable)})")

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
}
"""Short, stable name -> operator, in the order mutants are made."""


def examples() -> Iterator[tuple[str, Example]]:
    """Every operator's examples, for the project's tests."""
    for name, operator in CUSTOM.items():
        for example in operator.examples():
            yield name, example
