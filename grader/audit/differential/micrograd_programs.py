"""The micrograd program families: straight-line programs on ``Value``.

Why it exists: what ``generate("micrograd", ...)`` draws from, apart from the babygrad families;
each family is a ``(rng, turn) -> lines`` function, listed in ``MICROGRAD_FAMILIES``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from grader.audit.differential.programs import _const, _fmt, _num, _Program

MICROGRAD_HEADER = """from micrograd.engine import Value
import micrograd.engine

# An API without them (Karpathy's micrograd) raises alike in the reference and the candidate.
build_topo = getattr(micrograd.engine, "build_topo", None)
zero_grad = getattr(micrograd.engine, "zero_grad", None)


def show(**nodes):
    for name, v in nodes.items():
        print(name, v.data, v.grad)

"""


_MG_NUMBER_FORMS: list[tuple[str, Callable[[float, float], float], str]] = [
    ("{x} + {k}", lambda x, k: x + k, ""),
    ("{k} + {x}", lambda x, k: k + x, ""),
    ("{x} - {k}", lambda x, k: x - k, ""),
    ("{k} - {x}", lambda x, k: k - x, ""),
    ("{x} * {k}", lambda x, k: x * k, ""),
    ("{k} * {x}", lambda x, k: k * x, ""),
    ("{x} / {k}", lambda x, k: x / k, ""),
    ("{k} / {x}", lambda x, k: k / x, "x"),
]
_MG_UNARY: dict[str, tuple[str, Callable[[float], float]]] = {
    "tanh": ("{x}.tanh()", math.tanh),
    "exp": ("{x}.exp()", math.exp),
    "relu": ("{x}.relu()", lambda x: max(x, 0.0)),
    "neg": ("-{x}", lambda x: -x),
}
_INT_POWERS = [-3, -2, -1, 0, 1, 2, 3, 4]
_FLOAT_POWERS = [0.5, -0.5, 1.5, -1.5, 2.0, 2.5, 0.25, -1.0, 3.0]


def _mg_value(x: float) -> str:
    return f"Value({x!r})"


def _mg_leaves(p: _Program, count: int, away: float = 0.0) -> list[str]:
    out = []
    for _ in range(count):
        x = _num(p.rng, -2.5, 2.5, away=max(away, 0.05))
        if p.rng.random() < 0.15:
            x = int(round(x)) or 1
        out.append(p.let(_mg_value(x), float(x)))
    return out


def _mg_unary_ok(op: str, x: float) -> bool:
    return (op != "relu" or abs(x) >= 0.05) and (op != "exp" or x <= 4)


def _mg_power(p: _Program, x: str) -> tuple[str, float] | None:
    vx = p.values[x]
    if p.rng.random() < 0.5:
        k: float = p.rng.choice(_INT_POWERS)
        if (k <= 0 and abs(vx) < 0.3) or (k == 0 and vx == 0):
            return None
    else:
        k = p.rng.choice(_FLOAT_POWERS)
        if vx < 0.2:
            return None
    return f"{x} ** {_fmt(k)}", vx**k


def _mg_step(p: _Program) -> str | None:
    """One random node on the nodes so far, or None if it would leave the ops' domains."""
    rng = p.rng
    x = p.pick()
    vx = p.values[x]
    kind = rng.choice(["vv", "vv", "number", "unary", "unary", "pow"])
    if kind == "vv":
        y = p.pick(besides=x)
        vy = p.values[y]
        op = rng.choice("+-*/")
        if op == "/" and abs(vy) < 0.3:
            return None
        expr, value = (
            f"{x} {op} {y}",
            {"+": vx + vy, "-": vx - vy, "*": vx * vy, "/": vx / vy if vy else 0.0}[op],
        )
    elif kind == "number":
        template, fn, guard = rng.choice(_MG_NUMBER_FORMS)
        k = _const(rng)
        if guard and abs(vx) < 0.3:
            return None
        expr, value = template.format(x=x, k=_fmt(k)), fn(vx, k)
    elif kind == "unary":
        op = rng.choice(list(_MG_UNARY))
        if not _mg_unary_ok(op, vx):
            return None
        template, fn = _MG_UNARY[op]
        expr, value = template.format(x=x), fn(vx)
    else:
        made = _mg_power(p, x)
        if made is None:
            return None
        expr, value = made
    if isinstance(value, complex) or not math.isfinite(value) or abs(value) > 1e3:
        return None
    return p.let(expr, value)


def _mg_dag(p: _Program, leaves: int, steps: int) -> str:
    _mg_leaves(p, leaves)
    p.grow(_mg_step, steps)
    return list(p.values)[-1]


def mg_number(rng: random.Random, turn: int) -> list[str]:
    """A plain number on either side of + - * /, one or two ops."""
    p = _Program(rng)
    (x,) = _mg_leaves(p, 1, away=0.3)
    for step in range(rng.choice([1, 1, 2])):
        template, fn, guard = (
            _MG_NUMBER_FORMS[turn % len(_MG_NUMBER_FORMS)]
            if step == 0
            else rng.choice(_MG_NUMBER_FORMS)
        )
        k = _const(rng)
        if guard and abs(p.values[x]) < 0.3:
            continue
        x = p.let(template.format(x=x, k=_fmt(k)), fn(p.values[x], k))
    if len(p.values) == 1:
        x = p.let(f"{x} * 2", p.values[x] * 2)
    return p.finish(x)


def mg_values(rng: random.Random, turn: int) -> list[str]:
    """Two Values under + - * /, and the same op with the plain number on each side."""
    p = _Program(rng)
    a, b = _mg_leaves(p, 2, away=0.3)
    op = "+-*/"[turn % 4]
    out = p.let(f"{a} {op} {b}", 0.0)
    k = _const(rng)
    right = p.let(f"{a} {op} {_fmt(k)}", 0.0)
    left = p.let(f"{_fmt(k)} {op} {b}", 0.0)
    for node in (out, right, left):
        p.backward(node)
    p.show()
    return p.lines


def mg_power(rng: random.Random, turn: int) -> list[str]:
    """Int exponents (negative, 0, 1) on any base; float ones (negative, fractional) on > 0."""
    p = _Program(rng)
    powers = _INT_POWERS + _FLOAT_POWERS
    k = powers[turn % len(powers)]
    value = (
        _num(rng, 0.2, 3.0)
        if isinstance(k, float) or rng.random() < 0.5
        else _num(rng, -3.0, 3.0, away=0.3)
    )
    x = p.let(_mg_value(value), value)
    y = p.let(f"{x} ** {_fmt(k)}", value**k)
    if rng.random() < 0.4:
        y = p.let(f"{y} * {x}", 0.0)
    if rng.random() < 0.5:
        p.lines.append(f"{y}.grad = {_num(rng, -2, 2, away=0.1)!r}")
        p.lines.append(f"{y}._backward()")
    else:
        p.backward(y)
    p.show()
    return p.lines


def mg_unary(rng: random.Random, turn: int) -> list[str]:
    """tanh, exp, relu and unary minus, composed, on values on both sides of 0."""
    p = _Program(rng)
    (x,) = _mg_leaves(p, 1, away=0.05)
    for step in range(rng.randint(1, 3)):
        op = list(_MG_UNARY)[turn % len(_MG_UNARY)] if step == 0 else rng.choice(list(_MG_UNARY))
        if not _mg_unary_ok(op, p.values[x]):
            continue
        template, fn = _MG_UNARY[op]
        x = p.let(template.format(x=x), fn(p.values[x]))
    return p.finish(x)


def mg_kink(rng: random.Random, turn: int) -> list[str]:
    """Exactly 0 into relu (derivative 0 there), tanh, exp, pow and products."""
    p = _Program(rng)
    z = p.let(rng.choice(["Value(0.0)", "Value(0)", "Value(-0.0)"]), 0.0)
    b = p.let(_mg_value(_num(rng, -2, 2, away=0.3)), 0.0)
    forms = [
        f"{z}.relu()",
        f"({z} * {b}).relu()",
        f"({z} - {z}).relu()",
        f"{z}.tanh()",
        f"{z}.exp()",
        f"{z} ** 2",
        f"{z} ** 1",
        f"{z} * {b}",
        f"{b}.relu() * {z}",
        f"({b} * 0).relu()",
        f"({b} + {z}).relu()",
    ]
    nodes = [p.let(form, 0.0) for form in rng.sample(forms, rng.randint(1, 3))]
    out = p.let(" + ".join(nodes), 0.0) if len(nodes) > 1 else nodes[0]
    return p.finish(out)


_SHARED = [
    ["{b} = {a} * {a}"],
    ["{b} = {a} + {a}"],
    ["{b} = {a} * {a} * {a}"],
    ["{b} = {a} + {a} + {a}"],
    ["{b} = {a} - {a}"],
    ["{b} = {a} / {a}"],
    ["{b} = {a} * 2", "{c} = {a} + 3", "{d} = {b} * {c}"],
    ["{b} = {a}.tanh()", "{c} = {b} * {b} + {b}"],
    ["{b} = {a} * 3", "{c} = {b} + {b} * {b} - {b}"],
    ["{b} = {a}.exp()", "{c} = {b} / ({b} + 1)", "{d} = {c} * {a}"],
    ["{b} = {a} ** 2", "{c} = {b} * {a}", "{d} = {c} + {b} + {a}"],
    ["{b} = {a}.relu()", "{c} = {b} * {a} + {b}"],
    ["{b} = 2 - {a}", "{c} = {a} * {b}", "{d} = {c} / {b}"],
]


def mg_shared(rng: random.Random, turn: int) -> list[str]:
    """A node used twice or three times: a * a, a + a + a, diamonds."""
    p = _Program(rng)
    value = _num(rng, 0.3, 1.5) * rng.choice([1, -1])
    a = p.let(_mg_value(value), value)
    template = _SHARED[turn % len(_SHARED)]
    names = {"a": a, "b": "b", "c": "c", "d": "d"}
    for line in template:
        p.lines.append(line.format(**names))
        p.values[line.split(" = ")[0].format(**names)] = 0.0
    return p.finish(list(p.values)[-1])


def mg_dag(rng: random.Random, turn: int) -> list[str]:
    """A random graph of every op, with shared nodes; backward from the last node, which
    mostly adds up the nodes nothing else uses (the rest get no gradient)."""
    p = _Program(rng)
    leaves = rng.randint(1, 3)
    out = _mg_dag(p, leaves, rng.randint(3, 10))
    loose = p.dangling(leaves)
    if loose and rng.random() < 0.7:
        out = p.let(" + ".join([out, *loose[:3]]), 0.0)
    return p.finish(out)


def mg_twice(rng: random.Random, turn: int) -> list[str]:
    """backward() twice: the second pass adds on top of the first."""
    p = _Program(rng)
    out = _mg_dag(p, rng.randint(1, 2), rng.randint(2, 6))
    p.backward(out)
    p.show()
    return p.finish(out)


def mg_zero_grad(rng: random.Random, turn: int) -> list[str]:
    """zero_grad on the root (or on an inner node: only what it reaches), then again."""
    p = _Program(rng)
    out = _mg_dag(p, rng.randint(1, 3), rng.randint(2, 7))
    names = list(p.values)
    p.backward(out)
    target = out if rng.random() < 0.6 else rng.choice(names)
    p.lines.append(f"zero_grad({target})")
    p.show()
    return p.finish(out)


def mg_topo(rng: random.Random, turn: int) -> list[str]:
    """build_topo: the exact order where only one is valid, else what every valid one has."""
    p = _Program(rng)
    if rng.random() < 0.4:  # a chain without constants: exactly one topological order
        (x,) = _mg_leaves(p, 1, away=0.3)
        for _ in range(rng.randint(0, 5)):
            vx = p.values[x]
            choices = (
                ["tanh", "x * x", "x + x", "** 2"]
                + (["exp"] if vx <= 3 else [])
                + (["relu"] if abs(vx) >= 0.05 else [])
            )
            op = rng.choice(choices)
            expr, value = {
                "tanh": (f"{x}.tanh()", math.tanh(vx)),
                "exp": (f"{x}.exp()", math.exp(min(vx, 3))),
                "relu": (f"{x}.relu()", max(vx, 0.0)),
                "x * x": (f"{x} * {x}", vx * vx),
                "x + x": (f"{x} + {x}", 2 * vx),
                "** 2": (f"{x} ** 2", vx * vx),
            }[op]
            if abs(value) > 1e3:
                break
            x = p.let(expr, value)
        nodes = ", ".join(f"{n}={n}" for n in p.values)
        p.lines += [
            f"names = {{id(v): k for k, v in dict({nodes}).items()}}",
            f"order = build_topo({x})",
            "print(len(order), [names.get(id(n), '?') for n in order])",
        ]
    else:
        out = _mg_dag(p, rng.randint(1, 3), rng.randint(2, 9))
        nodes = ", ".join(f"{n}={n}" for n in p.values)
        p.lines += [
            f"names = {{id(v): k for k, v in dict({nodes}).items()}}",
            f"order = build_topo({out})",
            "pos = {id(n): i for i, n in enumerate(order)}",
            f"print(len(order), len(pos), order[-1] is {out})",
            "print(all(id(p) in pos and pos[id(p)] < pos[id(n)] for n in order for p in n._prev))",
            "print(sorted(names[id(n)] for n in order if id(n) in names))",
        ]
    p.show()
    return p.lines


def mg_closure(rng: random.Random, turn: int) -> list[str]:
    """One node's _backward() alone, on preset gradients: it adds, and only to its operands."""
    p = _Program(rng)
    value = _num(rng, 0.3, 2.0)
    a = p.let(_mg_value(value), value)
    (b,) = _mg_leaves(p, 1, away=0.3)
    forms = [
        f"{a} + {b}",
        f"{a} * {b}",
        f"{a} ** {rng.choice([2, 3, -1, 0.5, -1.5])}",
        f"{a}.tanh()",
        f"{a}.exp()",
        f"{a}.relu()",
        f"{b}.relu()",
        f"-{a}",
        f"{a} - {b}",
        f"{a} / {b}",
        f"2 + {a}",
        f"{a} + 2",
        f"3 * {a}",
        f"{a} * 3",
        f"2 - {a}",
        f"2 / {a}",
        f"{a} * {a}",
        f"{a} + {a}",
    ]
    if rng.random() < 0.7:
        p.lines.append(f"{a}.grad = {_num(rng, -1, 1)!r}")
    if rng.random() < 0.5:
        p.lines.append(f"{b}.grad = {_num(rng, -1, 1)!r}")
    out = p.let(forms[turn % len(forms)], 0.0)
    p.lines.append(f"{out}.grad = {_num(rng, -2, 2, away=0.1)!r}")
    for _ in range(rng.choice([1, 1, 2])):
        p.lines.append(f"{out}._backward()")
    p.show()
    return p.lines


def mg_preset(rng: random.Random, turn: int) -> list[str]:
    """Gradients already there: backward() seeds the root with 1.0 and adds to the rest."""
    p = _Program(rng)
    out = _mg_dag(p, rng.randint(1, 2), rng.randint(1, 5))
    for name in rng.sample(list(p.values), rng.randint(1, len(p.values))):
        p.lines.append(f"{name}.grad = {_num(rng, -2, 2)!r}")
    return p.finish(out)


_DEEP_BODIES = [
    "h = (h * {w} + {b}).tanh()",
    "h = h * {w} + {b} * 0.01",
    "h = (h + {b}).relu() * {w}",
    "h = h * 0.99 + ({b} * h).tanh() * 0.01",
    "h = -(h * {w}) + {b}",
    "h = (h * {w}).exp() * 0.5 + {b} * 0.1",
    "h = h + {b} / 300",
]


def mg_deep(rng: random.Random, turn: int) -> list[str]:
    """Hundreds of nodes in a chain (a loop builds it), and build_topo's length."""
    p = _Program(rng)
    a = p.let(_mg_value(_num(rng, -1, 1, away=0.1)), 0.0)
    b = p.let(_mg_value(_num(rng, -1, 1, away=0.1)), 0.0)
    w = repr(round(rng.uniform(0.5, 1.0), 2) * rng.choice([1, -1]))
    body = rng.choice(_DEEP_BODIES).format(w=_fmt(float(w)), b=b)
    p.lines += [
        f"h = {a}",
        f"for i in range({rng.randint(100, 400)}):",
        f"    {body}",
        "print(len(build_topo(h)))",
        "h.backward()",
    ]
    p.show([a, b, "h"])
    if rng.random() < 0.5:
        p.lines += ["zero_grad(h)", "h.backward()"]
        p.show([a, b, "h"])
    return p.lines


def mg_prev(rng: random.Random, turn: int) -> list[str]:
    """Each primitive's operands (_prev, as a set of names) and its data."""
    p = _Program(rng)
    a, b = _mg_leaves(p, 2, away=0.3)
    forms = [
        f"{a} + {b}",
        f"{a} * {b}",
        f"{a} + {a}",
        f"{a} * {a}",
        f"{a} ** 2",
        f"{a}.tanh()",
        f"{a}.exp()",
        f"{a}.relu()",
        f"{a} + 2",
        f"{a} * 2",
    ]
    out = p.let(rng.choice(forms), 0.0)
    p.lines += [
        f"names = {{id({a}): '{a}', id({b}): '{b}'}}",
        f"print(sorted({{names.get(id(v), str(v.data)) for v in {out}._prev}}))",
        f"print(len(build_topo({out})))",
    ]
    return p.finish(out)


_EDGES = [
    ["a = Value(0.0)", "b = a ** -1"],
    ["a = Value(1.5)", "b = a / 0"],
    ["a = Value(1.5)", "b = 0 / a", "b.backward()"],
    ["a = Value(800.0)", "b = a.exp()"],
    ["a = Value(-800.0)", "b = a.exp()", "b.backward()"],
    ["a = Value(40.0)", "b = a.tanh()", "b.backward()"],
    ["a = Value(-40.0)", "b = a.tanh()", "b.backward()"],
    ["a = Value(2.0)", "b = a ** Value(2.0)"],
    ["a = Value(0.0)", "b = a ** 0.5", "b.backward()"],
    ["a = Value(0.0)", "b = a ** 0", "b.backward()"],
    ["a = Value(2.0)", "b = a ** 0", "b.backward()"],
    ["a = Value(-2.0)", "b = a ** 3", "b.backward()"],
    ["a = Value(3)", "b = a * 2", "b.backward()"],
    ["a = Value(1.5)", "a.backward()"],
    ["a = Value(1e-8)", "b = a.relu()", "b.backward()"],
    ["a = Value(-1e-8)", "b = a.relu()", "b.backward()"],
    ["a = Value(2.0)", "b = a + a", "b.grad = 3.0", "b._backward()", "b._backward()"],
]


def mg_edge(rng: random.Random, turn: int) -> list[str]:
    """Division by zero, overflow, saturation, a Value exponent, a leaf's own backward()."""
    lines = list(_EDGES[turn % len(_EDGES)])
    names = [
        line.split(" = ")[0] for line in lines if " = " in line and "." not in line.split(" = ")[0]
    ]
    return [*lines, "show(" + ", ".join(f"{n}={n}" for n in names) + ")"]


MICROGRAD_FAMILIES: list[Callable[[random.Random, int], list[str]]] = [
    mg_number,
    mg_values,
    mg_power,
    mg_unary,
    mg_kink,
    mg_shared,
    mg_dag,
    mg_dag,
    mg_twice,
    mg_zero_grad,
    mg_topo,
    mg_closure,
    mg_preset,
    mg_deep,
    mg_prev,
    mg_edge,
    mg_number,
    mg_dag,
]
