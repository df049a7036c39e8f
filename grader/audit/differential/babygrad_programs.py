"""The babygrad program families: straight-line programs on ``Tensor`` and ``ops``.

Why it exists: what ``generate("babygrad", ...)`` draws from, apart from the micrograd
families; each family is a ``(rng, turn) -> lines`` function, listed in ``BABYGRAD_FAMILIES``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from grader.audit.differential.programs import _const, _fmt, _num, _Program

BABYGRAD_HEADER = """import numpy as np
from babygrad import Tensor, ops


def show(**tensors):
    for name, t in tensors.items():
        g = t.grad.data if isinstance(t.grad, Tensor) else t.grad
        grad = None if g is None else (np.shape(g), np.asarray(g).tolist())
        print(name, t.requires_grad, t.shape, t.data.tolist(), "grad", grad)


def show_parts(parts):
    for p in parts if isinstance(parts, (tuple, list)) else (parts,):
        d = p.data if isinstance(p, Tensor) else p
        print("part", np.shape(d), np.asarray(d).tolist())

"""


def _literal(array: np.ndarray) -> str:
    return repr(np.asarray(array, dtype=np.float64).tolist())


class _Tensors(_Program):
    def __init__(self, rng: random.Random):
        super().__init__(rng)
        self.dtype = "float32" if rng.random() < 0.7 else "float64"
        self.requires: dict[str, bool] = {}

    def array(
        self, shape: tuple[int, ...], lo: float = -2.0, hi: float = 2.0, away: float = 0.0
    ) -> np.ndarray:
        size = int(np.prod(shape, dtype=np.int64))
        return np.array([_num(self.rng, lo, hi, away) for _ in range(size)]).reshape(shape)

    def leaf(self, value: np.ndarray, requires_grad: bool = True) -> str:
        name = self.let(
            f"Tensor({_literal(value)}, requires_grad={requires_grad}, dtype={self.dtype!r})", value
        )
        self.requires[name] = requires_grad
        return name

    def upstream(self, shape: tuple[int, ...], name: str = "up") -> str:
        """A random gradient of ``shape``, never all ones."""
        g = self.array(shape, -2.0, 2.0, away=0.1)
        if g.size and np.all(g == 1.0):
            g.flat[0] = -0.5
        self.lines.append(
            f"{name} = Tensor({_literal(g)}, requires_grad=False, dtype={self.dtype!r})"
        )
        return name

    def backward(self, out: str, random_grad: bool | None = None) -> None:
        shape = np.shape(self.values[out])
        if random_grad is None:
            random_grad = self.rng.random() < 0.75
        if random_grad:
            self.lines.append(f"{out}.backward({self.upstream(shape)})")
        else:
            self.lines.append(f"{out}.backward()")

    def scalar(self) -> tuple[str, float]:
        """A plain number as source: int, float or a numpy scalar, never 0."""
        k = _const(self.rng)
        r = self.rng.random()
        if r < 0.15:
            return f"np.float32({float(k)!r})", float(np.float32(k))
        if r < 0.25:
            return f"np.float64({float(k)!r})", float(k)
        return _fmt(k), float(k)


def _shape(rng: random.Random, ndim: int | None = None) -> tuple[int, ...]:
    ndim = rng.choice([0, 1, 2, 2, 3, 3]) if ndim is None else ndim
    return tuple(rng.randint(1, 3 if ndim > 2 else 4) for _ in range(ndim))


def _broadcast_pair(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast: size-1 axes, missing leading axes, or equal."""
    out = _shape(rng, rng.choice([0, 1, 2, 2, 3, 3, 4]))

    def operand() -> tuple[int, ...]:
        drop = rng.randint(0, len(out)) if rng.random() < 0.35 else 0
        return tuple(1 if rng.random() < 0.25 else n for n in out[drop:])

    if rng.random() < 0.3:
        return out, out
    return operand(), operand()


_BINARY: dict[str, tuple[list[str], Callable[[Any, Any], Any]]] = {
    "add": (["{x} + {y}", "ops.add({x}, {y})", "ops.Add()({x}, {y})"], np.add),
    "sub": (["{x} - {y}", "ops.sub({x}, {y})", "ops.Sub()({x}, {y})"], np.subtract),
    "mul": (["{x} * {y}", "ops.mul({x}, {y})", "ops.Mul()({x}, {y})"], np.multiply),
    "div": (["{x} / {y}", "ops.divide({x}, {y})", "ops.Div()({x}, {y})"], np.divide),
    "pow": (["{x} ** {y}", "ops.power({x}, {y})", "ops.Pow()({x}, {y})"], np.power),
}
_UNARY: dict[str, tuple[list[str], Callable[[Any], Any]]] = {
    "neg": (["-{x}", "ops.negate({x})", "ops.Negate()({x})"], np.negative),
    "log": (["{x}.log()", "ops.log({x})", "ops.Log()({x})"], np.log),
    "exp": (["{x}.exp()", "ops.exp({x})", "ops.Exp()({x})"], np.exp),
    "sqrt": (["{x}.sqrt()", "ops.sqrt({x})", "ops.Sqrt()({x})"], np.sqrt),
    "abs": (["{x}.abs()", "ops.abs({x})", "ops.Abs()({x})"], np.abs),
    "relu": (["{x}.relu()", "ops.relu({x})", "ops.ReLU()({x})"], lambda x: np.maximum(x, 0)),
    "sigmoid": (
        ["{x}.sigmoid()", "ops.sigmoid({x})", "ops.Sigmoid()({x})"],
        lambda x: 1 / (1 + np.exp(-x)),
    ),
    "tanh": (["{x}.tanh()", "ops.tanh({x})", "ops.Tanh()({x})"], np.tanh),
}
_SCALAR_FORMS: list[tuple[str, Callable[[Any, float], Any], str]] = [
    ("{x} + {k}", lambda x, k: x + k, ""),
    ("{k} + {x}", lambda x, k: k + x, ""),
    ("ops.add_scalar({x}, {k})", lambda x, k: x + k, ""),
    ("ops.AddScalar({k})({x})", lambda x, k: x + k, ""),
    ("{x} - {k}", lambda x, k: x - k, ""),
    ("{k} - {x}", lambda x, k: k - x, ""),
    ("{x} * {k}", lambda x, k: x * k, ""),
    ("{k} * {x}", lambda x, k: k * x, ""),
    ("ops.mul_scalar({x}, {k})", lambda x, k: x * k, ""),
    ("ops.MulScalar({k})({x})", lambda x, k: x * k, ""),
    ("{x} / {k}", lambda x, k: x / k, ""),
    ("{k} / {x}", lambda x, k: k / x, "away"),
    ("ops.divide_scalar({x}, {k})", lambda x, k: x / k, ""),
    ("ops.DivScalar({k})({x})", lambda x, k: x / k, ""),
]
_POWER_FORMS = ["{x} ** {k}", "ops.power_scalar({x}, {k})", "ops.PowerScalar({k})({x})"]


def _ok(value: Any, limit: float = 50.0) -> bool:
    array = np.asarray(value, dtype=np.float64)
    return bool(np.all(np.isfinite(array)) and np.all(np.abs(array) <= limit) and array.size <= 48)


def _unary_ok(op: str, x: np.ndarray) -> bool:
    if op in ("log", "sqrt"):
        return bool(np.all(x >= 0.1))
    if op in ("abs", "relu"):
        return bool(np.all(np.abs(x) >= 0.05))
    if op == "exp":
        return bool(np.all(x <= 3))
    return True


def _binary_ok(op: str, x: np.ndarray, y: np.ndarray) -> bool:
    try:
        np.broadcast_shapes(np.shape(x), np.shape(y))
    except ValueError:
        return False
    if op == "div":
        return bool(np.all(np.abs(y) >= 0.3))
    if op == "pow":
        return bool(np.all(x >= 0.2) and np.all(np.abs(y) <= 2.5))
    return True


def _power_exponent(rng: random.Random, x: np.ndarray) -> float | None:
    if rng.random() < 0.5:
        k = rng.choice([-2, -1, 0, 1, 2, 3])
        return None if k <= 0 and not np.all(np.abs(x) >= 0.3) else k
    k = rng.choice([0.5, -0.5, 1.5, 2.0, -1.0, 0.25, 2.5])
    return k if np.all(x >= 0.2) else None


def _reshape_target(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    size = int(np.prod(shape, dtype=np.int64))
    dims: list[int] = []
    left = size
    for _ in range(rng.randint(0, 3)):
        divisors = [d for d in range(1, left + 1) if left % d == 0]
        d = rng.choice(divisors)
        dims.append(d)
        left //= d
    if left != 1 or not dims or rng.random() < 0.3:
        dims.append(left)
    rng.shuffle(dims)
    if size and dims and rng.random() < 0.3:
        dims[rng.randrange(len(dims))] = -1
    return tuple(dims)


_SHAPE_CLASSES = {
    "reshape": "Reshape",
    "transpose": "Transpose",
    "sum": "Summation",
    "broadcast": "BroadcastTo",
}
_SHAPE_FORMS = {
    "reshape": ["{x}.reshape({a})", "ops.reshape({x}, {a})"],
    "transpose": ["{x}.transpose({a})", "ops.transpose({x}, {a})"],
    "sum": ["{x}.sum({a})", "ops.summation({x}, {a})"],
    "broadcast": ["{x}.broadcast_to({a})", "ops.broadcast_to({x}, {a})"],
}
_DEFAULTED = {
    "transpose": ["{x}.transpose()", "ops.transpose({x})", "{x}.transpose(axes=None)"],
    "sum": ["{x}.sum()", "ops.summation({x})", "{x}.sum(axes=None)"],
}


def _shape_choice(
    rng: random.Random, v: np.ndarray, kind: str | None = None, variant: int | None = None
) -> tuple[str, str | None, Any] | None:
    """A shape op on ``v``: (kind, its argument as source or None for the default, value).
    reshape (maybe with -1), transpose (None or a permutation), sum (None, an int, maybe
    negative, or a tuple), broadcast_to (new leading axes, stretched size-1 axes). A
    ``variant`` picks the default argument or not (transpose), or which kind (sum)."""
    shape = np.shape(v)
    ndim = len(shape)
    kind = kind or rng.choice(["reshape", "transpose", "sum", "sum", "broadcast"])
    if kind == "reshape":
        target = _reshape_target(rng, shape)
        return kind, repr(target), np.reshape(v, target)
    if kind == "transpose":
        if ndim < 2:
            return None
        if (rng.random() < 0.5) if variant is None else variant % 2 == 0:
            return kind, None, np.swapaxes(v, -1, -2)
        axes = list(range(ndim))
        while axes == list(range(ndim)):
            rng.shuffle(axes)
        return kind, repr(tuple(axes)), np.transpose(v, axes)
    if kind == "sum":
        r = rng.random() if variant is None else (0.0, 0.5, 0.9)[variant % 3]
        if ndim == 0 or r < 0.3:
            return kind, None, np.sum(v)
        if r < 0.65:
            axes: Any = rng.randrange(-ndim, ndim)
        else:
            axes = tuple(rng.sample(range(ndim), rng.randint(1, ndim)))
            if rng.random() < 0.3:
                axes = tuple(a - ndim for a in axes)
        return kind, repr(axes), np.sum(v, axis=axes)
    target = [rng.randint(2, 3) if n == 1 and rng.random() < 0.7 else n for n in shape]
    lead = rng.randint(0 if target != list(shape) else 1, 2)
    target = [rng.randint(1, 3) for _ in range(lead)] + target
    return kind, repr(tuple(target)), np.broadcast_to(v, tuple(target))


def _shape_class(kind: str, argument: str | None) -> str:
    return f"ops.{_SHAPE_CLASSES[kind]}({argument or ''})"


def _shape_op(
    p: _Tensors, x: str, kind: str | None = None, variant: int | None = None
) -> tuple[str, Any] | None:
    """A shape op on tensor ``x`` as a method, a function or a Function: (source, value)."""
    made = _shape_choice(p.rng, p.values[x], kind, variant)
    if made is None:
        return None
    kind, argument, value = made
    forms = [
        *(
            _DEFAULTED[kind] + ["{x}.%s(None)" % ("sum" if kind == "sum" else "transpose")]
            if argument is None
            else _SHAPE_FORMS[kind]
        ),
        _shape_class(kind, argument) + "({x})",
    ]
    form = (
        p.rng.choice(forms)
        if variant is None
        else forms[variant // (3 if kind == "sum" else 2) % len(forms)]
    )
    return form.format(x=x, a=argument), value


_MATMUL_FORMS = ["{x} @ {y}", "{x}.matmul({y})", "ops.matmul({x}, {y})", "ops.MatMul()({x}, {y})"]


def _matmul_shapes(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    m, k, n = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
    b, c = rng.randint(2, 3), rng.randint(2, 3)
    return rng.choice(
        [
            ((m, k), (k, n)),
            ((m, k), (k, n)),
            ((b, m, k), (b, k, n)),
            ((b, m, k), (k, n)),
            ((m, k), (b, k, n)),
            ((1, m, k), (b, k, n)),
            ((b, m, k), (1, k, n)),
            ((c, 1, m, k), (b, k, n)),
            ((b, 1, m, k), (1, c, k, n)),
        ]
    )


def _tensor_step(p: _Tensors) -> str | None:
    """One random op on the tensors so far, or None if it leaves the ops' domains."""
    rng = p.rng
    x = p.pick()
    vx = p.values[x]
    kind = rng.choice(
        [
            "binary",
            "binary",
            "binary",
            "scalar",
            "scalar",
            "unary",
            "unary",
            "unary",
            "shape",
            "shape",
            "matmul",
        ]
    )
    if kind == "binary":
        y = p.pick(besides=x)
        op = rng.choice(list(_BINARY))
        forms, fn = _BINARY[op]
        if not _binary_ok(op, vx, p.values[y]):
            return None
        expr, value = rng.choice(forms).format(x=x, y=y), fn(vx, p.values[y])
    elif kind == "scalar":
        if rng.random() < 0.25:
            k = _power_exponent(rng, vx)
            if k is None:
                return None
            expr, value = rng.choice(_POWER_FORMS).format(x=x, k=_fmt(k)), np.power(vx, k)
        else:
            template, fn, guard = rng.choice(_SCALAR_FORMS)
            if guard and not np.all(np.abs(vx) >= 0.3):
                return None
            ks, k = p.scalar()
            expr, value = template.format(x=x, k=ks), fn(vx, k)
    elif kind == "unary":
        op = rng.choice(list(_UNARY))
        if not _unary_ok(op, vx):
            return None
        forms, fn = _UNARY[op]
        expr, value = rng.choice(forms).format(x=x), fn(vx)
    elif kind == "shape":
        made = _shape_op(p, x)
        if made is None:
            return None
        expr, value = made
    else:
        y = p.pick()
        vy = p.values[y]
        if np.ndim(vx) < 2 or np.ndim(vy) < 2 or np.shape(vx)[-1] != np.shape(vy)[-2]:
            return None
        try:
            value = np.matmul(vx, vy)
        except ValueError:
            return None
        expr = rng.choice(_MATMUL_FORMS).format(x=x, y=y)
    if not _ok(value):
        return None
    return p.let(expr, np.asarray(value, dtype=np.float64))


def _requires(rng: random.Random, count: int) -> list[bool]:
    flags = [rng.random() < 0.75 for _ in range(count)]
    if not any(flags):
        flags[rng.randrange(count)] = True
    return flags


def bg_binary(rng: random.Random, turn: int) -> list[str]:
    """add sub mul div pow, as operator, function and Function, with broadcasting."""
    p = _Tensors(rng)
    op = list(_BINARY)[turn % len(_BINARY)]
    forms, fn = _BINARY[op]
    form = forms[turn // len(_BINARY) % len(forms)]
    sa, sb = _broadcast_pair(rng)
    va = p.array(sa, 0.3, 2.0) if op == "pow" else p.array(sa)
    vb = (
        p.array(sb, -2.0, 2.0, away=0.3)
        if op == "div"
        else p.array(sb, -1.5, 2.0)
        if op == "pow"
        else p.array(sb)
    )
    if op == "pow" and rng.random() < 0.5:  # exponents 0, 1, 2 exactly among others
        vb = np.array(
            [rng.choice([0.0, 1.0, 2.0, -1.0, 0.5, _num(rng, -1.5, 2.0)]) for _ in range(vb.size)]
        ).reshape(vb.shape)
    flags = [False, False] if rng.random() < 0.1 else _requires(rng, 2)
    a, b = p.leaf(va, flags[0]), p.leaf(vb, flags[1])
    out = p.let(form.format(x=a, y=b), fn(va, vb))
    return p.finish(out)


def bg_scalar(rng: random.Random, turn: int) -> list[str]:
    """A plain number (int, float, numpy scalar) on either side, and the *_scalar ops."""
    p = _Tensors(rng)
    shape = _shape(rng)
    choice = turn % (len(_SCALAR_FORMS) + len(_POWER_FORMS) + 1)
    if choice < len(_POWER_FORMS):
        v = p.array(shape, 0.3, 2.0)
        a = p.leaf(v, rng.random() < 0.9)
        k = _power_exponent(rng, v)
        k = 2 if k is None else k
        out = p.let(_POWER_FORMS[choice].format(x=a, k=_fmt(k)), np.power(v, k))
    elif choice == len(_POWER_FORMS):  # a number to the power of a Tensor: what does it do?
        v = p.array(shape, -1.0, 1.0)
        a = p.leaf(v, True)
        out = p.let(f"2 ** {a}", np.power(2.0, v))
    else:
        template, fn, guard = _SCALAR_FORMS[choice - len(_POWER_FORMS) - 1]
        v = p.array(shape, -2.0, 2.0, away=0.3 if guard else 0.0)
        a = p.leaf(v, rng.random() < 0.9)
        ks, k = p.scalar()
        out = p.let(template.format(x=a, k=ks), fn(v, k))
    return p.finish(out)


def bg_arrays(rng: random.Random, turn: int) -> list[str]:
    """A numpy array or a list on either side of an operator (wrapped as a constant)."""
    p = _Tensors(rng)
    sa, sb = _broadcast_pair(rng)
    op = rng.choice(["+", "-", "*", "/"])
    va = p.array(sa, -2.0, 2.0, away=0.3)
    vb = p.array(sb, -2.0, 2.0, away=0.3)
    a = p.leaf(va, True)
    spelled = f"np.array({_literal(vb)})" if rng.random() < 0.6 or not sb else _literal(vb)
    fn = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op]
    if rng.random() < 0.5:
        out = p.let(f"{a} {op} {spelled}", fn(va, vb))
    else:
        out = p.let(f"{spelled} {op} {a}", fn(vb, va))
    if rng.random() < 0.2 and len(sa) >= 2:
        w = p.array((sa[-1], 2))
        out = p.let(f"{a} @ np.array({_literal(w)})", np.matmul(va, w))
    return p.finish(out)


def bg_unary(rng: random.Random, turn: int) -> list[str]:
    """negate log exp sqrt abs relu sigmoid tanh, as method, function and Function, composed."""
    p = _Tensors(rng)
    op = list(_UNARY)[turn % len(_UNARY)]
    lo, hi, away = {
        "log": (0.2, 3.0, 0.0),
        "sqrt": (0.2, 3.0, 0.0),
        "abs": (-2, 2, 0.1),
        "relu": (-2, 2, 0.1),
    }.get(op, (-2.0, 2.0, 0.0))
    v = p.array(_shape(rng), lo, hi, away)
    x = p.leaf(v, rng.random() < 0.9)
    forms, fn = _UNARY[op]
    x = p.let(forms[turn // len(_UNARY) % len(forms)].format(x=x), fn(v))
    for _ in range(rng.randint(0, 2)):
        op = rng.choice(list(_UNARY))
        if _unary_ok(op, p.values[x]):
            forms, fn = _UNARY[op]
            x = p.let(rng.choice(forms).format(x=x), fn(p.values[x]))
    return p.finish(x)


def bg_kink(rng: random.Random, turn: int) -> list[str]:
    """relu and abs at exactly 0 (derivative 0 there); sigmoid and tanh saturated; a Tensor
    power at base 0 and exponents 0, 1, 2, 3 (no gradient to the base where the exponent is
    0, none to the exponent where the base is 0)."""
    p = _Tensors(rng)
    shape = _shape(rng, rng.randint(1, 2))
    v = p.array(shape)
    v.flat[rng.randrange(v.size)] = 0.0
    if rng.random() < 0.5:
        v.flat[rng.randrange(v.size)] = 0.0
    r = (turn % 4) / 4 + rng.random() / 4
    if r < 0.25:
        base = np.abs(v)
        exponent = np.array([float(rng.choice([0, 1, 2, 3])) for _ in range(v.size)])
        exponent = exponent.reshape(v.shape)
        a, b = p.leaf(base, True), p.leaf(exponent, rng.random() < 0.8)
        out = p.let(rng.choice(_BINARY["pow"][0]).format(x=a, y=b), np.power(base, exponent))
    elif r < 0.65:
        x = p.leaf(v, True)
        op = rng.choice(["relu", "abs"])
        forms, fn = _UNARY[op]
        out = p.let(rng.choice(forms).format(x=x), fn(v))
    elif r < 0.75:
        x = p.leaf(v, True)
        d = p.let(f"{x} - {x}", v - v)
        out = p.let(rng.choice([f"{d}.relu()", f"{d}.abs()"]), np.zeros_like(v))
    else:
        big = np.array(
            [rng.choice([-60.0, -30.0, -12.0, 12.0, 30.0, 60.0]) for _ in range(v.size)]
        ).reshape(v.shape)
        x = p.leaf(big, True)
        op = rng.choice(["sigmoid", "tanh"])
        forms, fn = _UNARY[op]
        out = p.let(rng.choice(forms).format(x=x), fn(big))
    return p.finish(out)


def bg_shape(rng: random.Random, turn: int) -> list[str]:
    """reshape, transpose, summation, broadcast_to: one or two, then a random gradient."""
    p = _Tensors(rng)
    kind = list(_SHAPE_CLASSES)[turn % len(_SHAPE_CLASSES)]
    ndim = (
        rng.choice([2, 2, 3, 3, 4])
        if kind == "transpose" or rng.random() < 0.8
        else rng.choice([0, 1])
    )
    v = p.array(_shape(rng, ndim))
    x = p.leaf(v, rng.random() < 0.9)
    made, wanted = 0, rng.choice([1, 1, 2])
    for _ in range(40):
        if made == wanted:
            break
        step = _shape_op(p, x, kind, turn // len(_SHAPE_CLASSES)) if made == 0 else _shape_op(p, x)
        if step is not None and _ok(step[1]):
            x = p.let(step[0], np.asarray(step[1], dtype=np.float64))
            made += 1
    return p.finish(x)


def bg_matmul(rng: random.Random, turn: int) -> list[str]:
    """Matrix products: 2-D, batched, and batch axes that broadcast (size 1 or missing)."""
    p = _Tensors(rng)
    sa, sb = _matmul_shapes(rng)
    va, vb = p.array(sa), p.array(sb)
    flags = _requires(rng, 2)
    a, b = p.leaf(va, flags[0]), p.leaf(vb, flags[1])
    out = p.let(_MATMUL_FORMS[turn % len(_MATMUL_FORMS)].format(x=a, y=b), np.matmul(va, vb))
    if rng.random() < 0.3:
        out = p.let(f"{out}.sum()", np.sum(p.values[out]))
        p.backward(out, random_grad=False)
    else:
        p.backward(out)
    p.show()
    return p.lines


_DIRECT: list[tuple[str, int, str]] = [
    ("ops.Add()", 2, ""),
    ("ops.Sub()", 2, ""),
    ("ops.Mul()", 2, ""),
    ("ops.Div()", 2, "div"),
    ("ops.Pow()", 2, "pow"),
    ("ops.Negate()", 1, ""),
    ("ops.Log()", 1, "pos"),
    ("ops.Exp()", 1, ""),
    ("ops.Sqrt()", 1, "pos"),
    ("ops.Abs()", 1, "away"),
    ("ops.ReLU()", 1, "away"),
    ("ops.Sigmoid()", 1, ""),
    ("ops.Tanh()", 1, ""),
    ("ops.AddScalar({k})", 1, ""),
    ("ops.MulScalar({k})", 1, ""),
    ("ops.DivScalar({k})", 1, ""),
    ("ops.PowerScalar({p})", 1, "pos"),
    ("ops.MatMul()", 2, "matmul"),
    ("", 1, "reshape"),
    ("", 1, "transpose"),
    ("", 1, "sum"),
    ("", 1, "broadcast"),
]


def bg_direct(rng: random.Random, turn: int) -> list[str]:
    """A Function's backward(out_grad, node) called alone, with a random out_grad."""
    p = _Tensors(rng)
    spec, arity, kind = _DIRECT[turn % len(_DIRECT)]
    if kind == "matmul":
        sa, sb = _matmul_shapes(rng)
        inputs = [p.array(sa), p.array(sb)]
    elif arity == 2:
        sa, sb = _broadcast_pair(rng)
        inputs = [
            p.array(sa, 0.3, 2.0) if kind == "pow" else p.array(sa),
            p.array(sb, -2.0, 2.0, away=0.3) if kind == "div" else p.array(sb),
        ]
    else:
        shape = _shape(rng, rng.choice([2, 2, 3]) if kind == "transpose" else None)
        lo, away = (0.3, 0.0) if kind == "pos" else (-2.0, 0.3 if kind == "away" else 0.0)
        inputs = [p.array(shape, lo, 2.0, away)]
    names = [p.leaf(v, f) for v, f in zip(inputs, _requires(rng, arity), strict=True)]
    if not spec:
        made = None
        while made is None:
            made = _shape_choice(rng, inputs[0], kind)
        kind, argument, value = made
        op = _shape_class(kind, argument)
    else:
        ks, k = p.scalar()
        pw = rng.choice([2, 3, -1, 0.5, -0.5, 1.5])
        op = spec.format(k=ks, p=_fmt(pw))
        value = _direct_value(spec, inputs, k, pw)
    p.lines.append(f"op = {op}")
    out = p.let("op(" + ", ".join(names) + ")", np.asarray(value, dtype=np.float64))
    up = p.upstream(np.shape(value))
    call = rng.choice(["op.backward({up}, {out})", "{out}._op.backward({up}, {out})"])
    p.lines += ["parts = " + call.format(up=up, out=out), "show_parts(parts)"]
    p.show()
    return p.lines


def _direct_value(spec: str, inputs: list[np.ndarray], k: float, pw: float) -> np.ndarray:
    name = spec.split("(")[0].removeprefix("ops.")
    x = inputs[0]
    binary = {
        "Add": np.add,
        "Sub": np.subtract,
        "Mul": np.multiply,
        "Div": np.divide,
        "Pow": np.power,
        "MatMul": np.matmul,
    }
    if name in binary:
        return binary[name](x, inputs[1])
    unary = {
        "Negate": np.negative,
        "Log": np.log,
        "Exp": np.exp,
        "Sqrt": np.sqrt,
        "Abs": np.abs,
        "ReLU": lambda a: np.maximum(a, 0),
        "Sigmoid": lambda a: 1 / (1 + np.exp(-a)),
        "Tanh": np.tanh,
        "AddScalar": lambda a: a + k,
        "MulScalar": lambda a: a * k,
        "DivScalar": lambda a: a / k,
        "PowerScalar": lambda a: np.power(a, pw),
    }
    return np.asarray(unary[name](x), dtype=np.float64)


def bg_graph(rng: random.Random, turn: int) -> list[str]:
    """A random graph of every op with shared tensors and leaves that do not require grad."""
    p = _Tensors(rng)
    sa, sb = _broadcast_pair(rng)
    shapes = [sa, sb] + ([_shape(rng)] if rng.random() < 0.4 else [])
    for shape, flag in zip(shapes, _requires(rng, len(shapes)), strict=True):
        p.leaf(p.array(shape), flag)
    p.grow(_tensor_step, rng.randint(2, 8))
    out = list(p.values)[-1]
    loose = p.dangling(len(shapes))
    if rng.random() < 0.5 and (loose or np.ndim(p.values[out]) > 0):
        total = [out, *loose[:3]]
        out = p.let(
            " + ".join(f"{n}.sum()" for n in total), sum(np.sum(p.values[n]) for n in total)
        )
        p.backward(out, random_grad=rng.random() < 0.3)
    else:
        p.backward(out)
    p.show()
    return p.lines


def bg_backward(rng: random.Random, turn: int) -> list[str]:
    """Tensor.backward's API: default ones on a non-scalar, twice, from an inner tensor, on a
    leaf, on an output that does not require grad."""
    p = _Tensors(rng)
    sa, sb = _broadcast_pair(rng)
    case = rng.choice(["default", "twice", "inner", "leaf", "constant", "shared"])
    va, vb = p.array(sa, 0.3, 2.0), p.array(sb, -2.0, 2.0, away=0.3)
    flags = [False, False] if case == "constant" else _requires(rng, 2)
    a, b = p.leaf(va, flags[0]), p.leaf(vb, flags[1])
    c = p.let(f"{a} * {b}", va * vb)
    if case == "shared":
        out = p.let(
            f"{a} * {a} + {a} / {b} - {a}.log() * {c}", va * va + va / vb - np.log(va) * va * vb
        )
    else:
        out = p.let(f"({c} + {a}).tanh()", np.tanh(va * vb + va))
    if case == "default":
        p.backward(out, random_grad=False)
    elif case == "twice":
        p.backward(out, random_grad=True)
        p.show()
        p.upstream(np.shape(p.values[out]), "up2")
        p.lines.append(f"{out}.backward(up2)")
    elif case == "inner":
        p.backward(c)
        p.show()
        p.backward(out)
    elif case == "leaf":
        p.backward(a, random_grad=rng.random() < 0.7)
    else:
        p.backward(out)
    p.show()
    return p.lines


def bg_unbroadcast(rng: random.Random, turn: int) -> list[str]:
    """ops.unbroadcast on its own: sum a gradient back down to a shape it was broadcast from."""
    p = _Tensors(rng)
    target, _ = _broadcast_pair(rng)
    grown = [rng.randint(2, 3) if n == 1 and rng.random() < 0.7 else n for n in target]
    grown = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))] + grown
    g = p.array(tuple(grown))
    p.lines += [
        f"g = np.array({_literal(g)}, dtype=np.{p.dtype})",
        f"r = np.asarray(ops.unbroadcast(g, {tuple(target)!r}))",
        "print(r.shape, r.tolist())",
    ]
    return p.lines


def bg_zero_d(rng: random.Random, turn: int) -> list[str]:
    """0-d tensors and Tensor(Tensor(...)) among n-d ones."""
    p = _Tensors(rng)
    s = p.leaf(np.array(_num(rng, 0.3, 2.0)), True)
    v = p.array(_shape(rng, rng.randint(1, 2)), -2.0, 2.0, away=0.3)
    t = p.leaf(v, rng.random() < 0.8)
    if rng.random() < 0.5:
        t2 = p.let(f"Tensor({t}, requires_grad=True, dtype={p.dtype!r})", v)
        t = t2
    sv = p.values[s]
    form, value = rng.choice(
        [
            (f"{s} * {t}", sv * v),
            (f"{t} / {s}", v / sv),
            (f"{t} - {s}", v - sv),
            (f"{s} ** 2 + {t}", sv**2 + v),
            (f"{s}.sum() * {t}", sv * v),
            (f"{s} + {t}.sum()", sv + v.sum()),
        ]
    )
    out = p.let(form, value)
    return p.finish(out)


_BG_DEEP = [
    ("h = (h * {w} + {b}).tanh()", "elementwise"),
    ("h = (h @ {m}).tanh() + {b}", "matmul"),
    ("h = h * 0.9 + ({b} * h).sigmoid() * 0.1", "elementwise"),
    ("h = (h - {b}).relu() + {w} * 0.5", "elementwise"),
]


def bg_deep(rng: random.Random, turn: int) -> list[str]:
    """Tens of ops in a chain (a loop builds it), with shared leaves."""
    p = _Tensors(rng)
    body, kind = rng.choice(_BG_DEEP)
    n = rng.randint(2, 3)
    a = p.leaf(p.array((2, n), -1, 1), True)
    w = p.leaf(p.array((n,), 0.5, 1.0), rng.random() < 0.8)
    b = p.leaf(p.array((n,), -0.5, 0.5, away=0.05), True)
    m = p.leaf(p.array((n, n), -0.6, 0.6), True) if kind == "matmul" else None
    p.lines += [
        f"h = {a}",
        f"for i in range({rng.randint(20, 80)}):",
        "    " + body.format(w=w, b=b, m=m),
        "out = h.sum()",
        "out.backward()",
    ]
    p.show([*p.values, "h", "out"])
    return p.lines


BABYGRAD_FAMILIES: list[Callable[[random.Random, int], list[str]]] = [
    bg_binary,
    bg_binary,
    bg_scalar,
    bg_scalar,
    bg_arrays,
    bg_unary,
    bg_unary,
    bg_kink,
    bg_shape,
    bg_shape,
    bg_matmul,
    bg_matmul,
    bg_direct,
    bg_direct,
    bg_graph,
    bg_graph,
    bg_graph,
    bg_backward,
    bg_unbroadcast,
    bg_zero_d,
    bg_deep,
]
