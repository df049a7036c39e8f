"""Pin the reference micrograd engine: the course's worked examples, graph helpers, and torch."""

import math
import sys

import pytest

from tests.helpers import REPO_ROOT, programs

REFERENCE = REPO_ROOT / "reference"


@pytest.fixture(scope="module")
def engine(import_isolated):
    return import_isolated(REFERENCE, "micrograd.engine")


@pytest.fixture(scope="module")
def Value(engine):
    return engine.Value


# ------------------------------------------------------------------------------ worked examples


def test_sum_product_example(Value):
    a, b, c = Value(2.0), Value(3.0), Value(1.0)
    L = (a * b + c) * (a + b)
    L.backward()
    assert L.data == 35.0
    assert (a.grad, b.grad, c.grad) == (22.0, 17.0, 5.0)
    assert L.grad == 1.0


def test_same_operand_twice_accumulates(Value):
    a = Value(3.0)
    b = a + a
    b.backward()
    assert b._prev == (a, a)
    assert a.grad == 2.0


def test_tanh_neuron(Value):
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    n = x1 * w1 + x2 * w2 + b
    o = n.tanh()
    o.backward()
    assert o.data == pytest.approx(math.sqrt(0.5), abs=1e-6)
    assert n.grad == pytest.approx(0.5, abs=1e-6)
    assert b.grad == pytest.approx(0.5, abs=1e-6)
    assert x1.grad == pytest.approx(-1.5, abs=1e-6)
    assert w1.grad == pytest.approx(1.0, abs=1e-6)
    assert x2.grad == pytest.approx(0.5, abs=1e-6)
    assert w2.grad == 0.0


def test_shared_variables(Value):
    a, b = Value(-2.0), Value(3.0)
    f = (a * b) * (a + b)
    f.backward()
    assert f.data == -6.0
    assert (a.grad, b.grad) == (-3.0, -8.0)


def test_leaf_defaults(Value):
    v = Value(4, label="v")
    assert isinstance(v.data, float) and v.data == 4.0
    assert v.grad == 0.0
    assert v._prev == () and v._op == "" and v.label == "v"
    assert v._backward() is None
    assert "4.0" in repr(v)


def test_prev_is_an_ordered_tuple(Value):
    a, b = Value(1.0), Value(2.0)
    assert (a * b)._prev == (a, b)
    assert (b + a)._prev == (b, a)
    assert a.tanh()._prev == (a,)
    assert (a**2)._prev == (a,)


# ---------------------------------------------------------------------------- backward and graph


def test_second_backward_adds(Value):
    a, b = Value(2.0), Value(-4.0)
    out = a * b
    out.backward()
    first = (a.grad, b.grad)
    out.backward()
    assert (a.grad, b.grad) == (2 * first[0], 2 * first[1])


def test_zero_grad_resets_everything(engine, Value):
    a, b, c = Value(2.0), Value(3.0), Value(1.0)
    ab = a * b
    L = (ab + c) * (a + b)
    L.backward()
    L.backward()
    engine.zero_grad(L)
    for node in engine.build_topo(L):
        assert node.grad == 0.0
    L.backward()
    assert (a.grad, b.grad, c.grad) == (22.0, 17.0, 5.0)
    assert engine.zero_grad(L) is None


def assert_valid_topo(order, root):
    assert order[-1] is root
    ids = [id(node) for node in order]
    assert len(ids) == len(set(ids)), "a node appears more than once"
    position = {id(node): i for i, node in enumerate(order)}
    reachable, stack = {id(root)}, [root]
    while stack:
        node = stack.pop()
        for child in node._prev:
            assert position[id(child)] < position[id(node)], "an operand comes after its user"
            if id(child) not in reachable:
                reachable.add(id(child))
                stack.append(child)
    assert reachable == set(ids), "order must hold exactly the reachable nodes"


def test_build_topo_diamond(engine, Value):
    a = Value(1.5)
    left, right = a * 2.0, a.exp()
    top = left + right
    root = top * a
    order = engine.build_topo(root)
    assert_valid_topo(order, root)
    assert sum(node is a for node in order) == 1
    assert len(order) == 6  # a, the wrapped constant 2.0, left, right, top, root


def test_build_topo_small_graphs(engine, Value):
    a, b, c = Value(2.0), Value(3.0), Value(1.0)
    L = (a * b + c) * (a + b)
    assert_valid_topo(engine.build_topo(L), L)
    leaf = Value(1.0)
    assert engine.build_topo(leaf) == [leaf]
    twice = a + a
    assert engine.build_topo(twice) == [a, twice]


def test_build_topo_follows_operand_order(engine, Value):
    a, b = Value(1.0), Value(2.0)
    out = a * b
    assert engine.build_topo(out) == [a, b, out]
    out = b * a
    assert engine.build_topo(out) == [b, a, out]


def test_backward_uses_module_level_build_topo(engine, Value, monkeypatch):
    calls = []
    real = engine.build_topo

    def spy(root):
        calls.append(root)
        return real(root)

    monkeypatch.setattr(engine, "build_topo", spy)
    a = Value(2.0)
    out = a * a
    out.backward()
    assert calls == [out]
    assert a.grad == 4.0


def test_long_chain_at_default_recursion_limit(engine, Value):
    assert sys.getrecursionlimit() <= 10_000
    x = Value(0.5)
    node = x
    for _ in range(100_000):
        node = node + 1.0
    order = engine.build_topo(node)
    assert len(order) == 200_001  # x, each constant 1.0, and each sum
    node.backward()
    assert x.grad == 1.0
    engine.zero_grad(node)
    assert x.grad == 0.0 and node.grad == 0.0


def test_relu_gradient_at_zero_is_zero(Value):
    for x, grad in [(0.0, 0.0), (-0.0, 0.0), (-1.0, 0.0), (2.5, 1.0)]:
        v = Value(x)
        out = v.relu()
        out.backward()
        assert out.data == max(0.0, x)
        assert v.grad == grad


def test_tanh_is_stable(Value):
    for x in (-1000.0, 1000.0, 50.0):
        v = Value(x)
        out = v.tanh()
        out.backward()
        assert out.data == math.copysign(1.0, x)
        assert v.grad == 0.0


def test_number_operands_are_wrapped(Value):
    a = Value(3.0)
    for out, expected in [
        (a + 2, 5.0),
        (2 + a, 5.0),
        (a * 2, 6.0),
        (2 * a, 6.0),
        (a - 2, 1.0),
        (2 - a, -1.0),
        (a / 2, 1.5),
        (6 / a, 2.0),
        (-a, -3.0),
    ]:
        assert isinstance(out, Value)
        assert out.data == pytest.approx(expected)


# --------------------------------------------------------------------------- against torch


def _ops():
    """(name, micrograd function, torch function, inputs) for every op and reflected form."""

    def tanh(x):
        return x.tanh()

    def exp(x):
        return x.exp()

    def relu(x):
        return x.relu()

    return [
        ("add", lambda x, y: x + y, lambda x, y: x + y, [(2.0, 3.0), (-1.5, 0.25)]),
        ("mul", lambda x, y: x * y, lambda x, y: x * y, [(2.0, 3.0), (-1.5, 0.25)]),
        ("sub", lambda x, y: x - y, lambda x, y: x - y, [(2.0, 3.0), (-1.5, 0.25)]),
        ("div", lambda x, y: x / y, lambda x, y: x / y, [(2.0, 3.0), (-1.5, 0.25)]),
        ("pow2", lambda x: x**2, lambda x: x**2, [(3.0,), (-1.5,)]),
        ("pow3", lambda x: x**3, lambda x: x**3, [(3.0,), (-1.5,)]),
        ("pow-1", lambda x: x**-1, lambda x: x**-1, [(3.0,), (-1.5,)]),
        ("pow0.5", lambda x: x**0.5, lambda x: x**0.5, [(3.0,), (0.2,)]),
        ("pow-2.5", lambda x: x**-2.5, lambda x: x**-2.5, [(3.0,), (0.7,)]),
        ("neg", lambda x: -x, lambda x: -x, [(3.0,), (-1.5,)]),
        ("tanh", tanh, tanh, [(0.5,), (-2.0,), (0.0,)]),
        ("exp", exp, exp, [(0.5,), (-2.0,), (3.0,)]),
        ("relu", relu, relu, [(0.5,), (-2.0,), (0.0,)]),
        ("radd", lambda x: 2.5 + x, lambda x: 2.5 + x, [(0.5,), (-2.0,)]),
        ("rmul", lambda x: 2.5 * x, lambda x: 2.5 * x, [(0.5,), (-2.0,)]),
        ("rsub", lambda x: 2.5 - x, lambda x: 2.5 - x, [(0.5,), (-2.0,)]),
        ("rtruediv", lambda x: 2.5 / x, lambda x: 2.5 / x, [(0.5,), (-2.0,)]),
        ("add_number", lambda x: x + 4, lambda x: x + 4, [(0.5,), (-2.0,)]),
        ("sub_number", lambda x: x - 4, lambda x: x - 4, [(0.5,), (-2.0,)]),
        ("mul_number", lambda x: x * 4, lambda x: x * 4, [(0.5,), (-2.0,)]),
        ("div_number", lambda x: x / 4, lambda x: x / 4, [(0.5,), (-2.0,)]),
        ("int_radd", lambda x: 3 + x, lambda x: 3 + x, [(0.5,)]),
        ("int_rtruediv", lambda x: 3 / x, lambda x: 3 / x, [(0.5,)]),
    ]


OPS = _ops()


def _compare(Value, torch, fn, torch_fn, inputs):
    ours = [Value(x) for x in inputs]
    out = fn(*ours)
    out.backward()
    theirs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in inputs]
    expected = torch_fn(*theirs)
    expected.backward()
    assert out.data == pytest.approx(expected.item(), rel=1e-12, abs=1e-12)
    for v, t in zip(ours, theirs, strict=True):
        assert v.grad == pytest.approx(t.grad.item(), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(("name", "fn", "torch_fn", "cases"), OPS, ids=[op[0] for op in OPS])
def test_op_matches_torch(Value, name, fn, torch_fn, cases):
    torch = programs.torch()
    for inputs in cases:
        _compare(Value, torch, fn, torch_fn, inputs)


@pytest.mark.parametrize(("name", "fn", "torch_fn", "cases"), OPS, ids=[op[0] for op in OPS])
def test_op_matches_torch_over_a_range(Value, name, fn, torch_fn, cases):
    torch = programs.torch()
    arity = len(cases[0])
    values = [-2.75, -1.0, -0.3, 0.4, 1.0, 2.2]
    if name.startswith("pow") and "." in name:
        values = [v for v in values if v > 0]  # fractional powers of negatives are not real
    for i, x in enumerate(values):
        inputs = (x,) if arity == 1 else (x, values[(i + 2) % len(values)])
        _compare(Value, torch, fn, torch_fn, inputs)


def test_worked_examples_match_torch(Value):
    torch = programs.torch()

    def expression(a, b, c):
        return (a * b + c) * (a + b) + (a - c) / b - 2 * a.tanh() + (b * c).exp() / 100

    _compare(Value, torch, expression, expression, (2.0, 3.0, 1.0))
    _compare(Value, torch, expression, expression, (-0.5, 1.25, -0.75))
