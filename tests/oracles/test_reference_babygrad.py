"""Pin the reference babygrad package: every op's forward and backward against torch.autograd."""

import sys
import warnings

import numpy as np
import pytest

from tests.helpers import REPO_ROOT, programs

REFERENCE = REPO_ROOT / "reference"


@pytest.fixture(scope="module")
def ops(import_isolated):
    return import_isolated(REFERENCE, "babygrad.ops")


@pytest.fixture(scope="module")
def Tensor(ops):
    return ops.Tensor


@pytest.fixture(scope="module")
def torch():
    return programs.torch()


def _inputs(shapes, seed, domain):
    rng = np.random.default_rng(seed)
    arrays = []
    for shape in shapes:
        x = rng.uniform(-2.0, 2.0, size=shape)
        if domain == "positive":
            x = np.abs(x) + 0.1
        elif domain == "nonzero":
            x = np.where(np.abs(x) < 0.2, 0.2 + np.abs(x), x)
        arrays.append(x)
    return arrays


def check_against_torch(
    Tensor, torch, fn, shapes, *, torch_fn=None, domain="any", seed=0, arrays=None
):
    """Run ``fn`` on float64 babygrad and torch tensors; compare outputs and input gradients.

    The output gradient is random (not ones) so each backward's use of out_grad is checked.
    """
    torch_fn = torch_fn or fn
    arrays = arrays if arrays is not None else _inputs(shapes, seed, domain)
    ours = [Tensor(x, dtype="float64") for x in arrays]
    theirs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in arrays]
    out = fn(*ours)
    expected = torch_fn(*theirs)
    assert isinstance(out, Tensor)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    upstream = np.random.default_rng(seed + 1).uniform(-1.0, 1.0, size=out.shape)
    out.backward(Tensor(upstream, dtype="float64"))
    expected.backward(torch.tensor(upstream, dtype=torch.float64))
    for x, ours_t, theirs_t in zip(arrays, ours, theirs, strict=True):
        assert isinstance(ours_t.grad, Tensor)
        assert ours_t.grad.shape == x.shape
        np.testing.assert_allclose(ours_t.grad.data, theirs_t.grad.numpy(), rtol=1e-9, atol=1e-12)
    return out


# ------------------------------------------------------------------------ the notes' example


def test_chain_example(Tensor):
    a = Tensor([2, 3], dtype="float32")
    b = Tensor([4, 5], dtype="float32")
    w = Tensor([3, 2], dtype="float32")
    c = a * b
    d = c * w
    np.testing.assert_array_equal(c.data, [8, 15])
    np.testing.assert_array_equal(d.data, [24, 30])
    d.backward()
    np.testing.assert_array_equal(a.grad.data, [12, 10])
    np.testing.assert_array_equal(b.grad.data, [6, 6])
    np.testing.assert_array_equal(w.grad.data, [8, 15])
    np.testing.assert_array_equal(c.grad.data, [3, 2])
    np.testing.assert_array_equal(d.grad.data, [1, 1])


# ------------------------------------------------------------------------------ the Tensor


def test_package_exports_tensor(import_isolated, Tensor):
    package = import_isolated(REFERENCE, "babygrad")
    assert isinstance(package.Tensor, type) and package.Tensor.__name__ == "Tensor"
    assert package.Tensor.__module__ == "babygrad.tensor"


def test_tensor_construction(Tensor):
    t = Tensor([[1, 2], [3, 4]])
    assert t.dtype == np.float32 and t.data.dtype == np.float32
    assert t.shape == (2, 2)
    assert t.requires_grad is True
    assert t.grad is None and t._op is None and t._inputs == ()
    assert Tensor(3).shape == ()
    assert Tensor(2.5, requires_grad=False).requires_grad is False
    assert Tensor(np.arange(3), dtype="float64").dtype == np.float64
    copy = Tensor(t)
    np.testing.assert_array_equal(copy.data, t.data)
    source = np.ones(3)
    wrapped = Tensor(source)
    source[0] = 5.0
    assert wrapped.data[0] == 1.0, "the constructor copies its data"


def test_graph_is_recorded(ops, Tensor):
    a, b = Tensor([1.0, 2.0]), Tensor([3.0, 4.0])
    c = a + b
    assert isinstance(c._op, ops.Add)
    assert c._inputs == (a, b)
    assert c.requires_grad
    frozen = Tensor([1.0], requires_grad=False) * Tensor([2.0], requires_grad=False)
    assert frozen._op is None and frozen._inputs == () and not frozen.requires_grad


def test_float64_is_honoured(Tensor):
    a = Tensor([1.0, 2.0, 3.0], dtype="float64")
    b = Tensor([[0.5], [0.25]], dtype="float64")
    out = ((a * b + 1.0) / 3 - a.exp()).sum()
    assert out.dtype == np.float64
    out.backward()
    assert a.grad.data.dtype == np.float64 and b.grad.data.dtype == np.float64


def test_float32_by_default(Tensor):
    a = Tensor([1.0, 2.0, 3.0])
    out = ((a * 2 + 1.0) ** 2).sum()
    assert out.dtype == np.float32
    out.backward()
    np.testing.assert_allclose(a.grad.data, 4 * (2 * np.array([1.0, 2.0, 3.0]) + 1))


# ----------------------------------------------------------------------------- binary ops

BINARY = {
    "add": (lambda a, b: a + b, "any"),
    "sub": (lambda a, b: a - b, "any"),
    "mul": (lambda a, b: a * b, "any"),
    "div": (lambda a, b: a / b, "nonzero"),
    "pow": (lambda a, b: a**b, "positive"),
}

BROADCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((2, 3, 4), (4,)),  # prepended axes
    ((4,), (2, 3, 4)),
    ((3, 1), (1, 4)),  # stretched size-1 axes on both sides
    ((2, 1, 4), (3, 1)),  # prepended and stretched
    ((5, 1, 1), (1, 2, 3)),
    ((3, 4), ()),  # a 0-d tensor operand
    ((), (2, 2)),
]


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_op(Tensor, torch, name, shapes):
    fn, domain = BINARY[name]
    check_against_torch(Tensor, torch, fn, shapes, domain=domain)


def test_binary_ops_record_their_classes(ops, Tensor):
    a, b = Tensor([1.0, 2.0]), Tensor([3.0, 4.0])
    assert isinstance((a + b)._op, ops.Add)
    assert isinstance((a - b)._op, ops.Sub)
    assert isinstance((a * b)._op, ops.Mul)
    assert isinstance((a / b)._op, ops.Div)
    assert isinstance((a**b)._op, ops.Pow)


def test_function_forms(ops, Tensor, torch):
    check_against_torch(Tensor, torch, ops.add, [(2, 3), (3,)], torch_fn=torch.add)
    check_against_torch(Tensor, torch, ops.sub, [(2, 3), (3,)], torch_fn=lambda a, b: a - b)
    check_against_torch(Tensor, torch, ops.mul, [(2, 3), (3,)], torch_fn=lambda a, b: a * b)
    check_against_torch(
        Tensor, torch, ops.divide, [(2, 3), (3,)], torch_fn=torch.div, domain="nonzero"
    )
    check_against_torch(
        Tensor, torch, ops.power, [(2, 3), (3,)], torch_fn=torch.pow, domain="positive"
    )


def test_unbroadcast_helper(ops):
    grad = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(ops.unbroadcast(grad, (2, 3, 4)), grad)
    np.testing.assert_array_equal(ops.unbroadcast(grad, (4,)), grad.sum(axis=(0, 1)))
    np.testing.assert_array_equal(ops.unbroadcast(grad, (3, 1)), grad.sum(axis=(0, 2))[:, None])
    np.testing.assert_array_equal(ops.unbroadcast(grad, (2, 1, 4)), grad.sum(1, keepdims=True))
    np.testing.assert_array_equal(ops.unbroadcast(grad, ()), grad.sum())
    assert ops.unbroadcast(grad, (1, 1, 1)).shape == (1, 1, 1)


# ------------------------------------------------------------------------------ unary ops

UNARY = {
    "negate": (lambda a: -a, "any"),
    "log": (lambda a: a.log(), "positive"),
    "exp": (lambda a: a.exp(), "any"),
    "sqrt": (lambda a: a.sqrt(), "positive"),
    "abs": (lambda a: a.abs(), "nonzero"),
    "relu": (lambda a: a.relu(), "nonzero"),
    "sigmoid": (lambda a: a.sigmoid(), "any"),
    "tanh": (lambda a: a.tanh(), "any"),
}


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 1, 3), ()], ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_op(Tensor, torch, name, shape):
    fn, domain = UNARY[name]
    check_against_torch(Tensor, torch, fn, [shape], domain=domain, seed=len(shape))


def test_unary_function_forms(ops, Tensor, torch):
    for ours, theirs, domain in [
        (ops.negate, torch.neg, "any"),
        (ops.log, torch.log, "positive"),
        (ops.exp, torch.exp, "any"),
        (ops.sqrt, torch.sqrt, "positive"),
        (ops.abs, torch.abs, "nonzero"),
        (ops.relu, torch.relu, "nonzero"),
        (ops.sigmoid, torch.sigmoid, "any"),
        (ops.tanh, torch.tanh, "any"),
    ]:
        check_against_torch(Tensor, torch, ours, [(3, 2)], torch_fn=theirs, domain=domain)


def test_abs_and_relu_gradients_at_zero(Tensor, torch):
    x = np.array([-1.5, 0.0, 2.0, -0.0])
    for fn in (lambda a: a.abs(), lambda a: a.relu()):
        check_against_torch(Tensor, torch, fn, None, arrays=[x])
    a = Tensor(x, dtype="float64")
    a.abs().backward()
    np.testing.assert_array_equal(a.grad.data, [-1.0, 0.0, 1.0, 0.0])
    a.relu().backward()
    np.testing.assert_array_equal(a.grad.data, [0.0, 0.0, 1.0, 0.0])


def test_sigmoid_is_stable(Tensor):
    a = Tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = a.sigmoid()
        out.backward()
    np.testing.assert_allclose(out.data, [0.0, 1.9287498479639178e-22, 0.5, 1.0, 1.0], atol=0)
    assert np.all(np.isfinite(a.grad.data))
    assert a.grad.data[2] == 0.25
    f32 = Tensor([-100.0, 100.0]).sigmoid()
    assert f32.dtype == np.float32 and np.all(np.isfinite(f32.data))


def test_pow_edge_gradients_follow_torch(Tensor, torch):
    arrays = [np.array([0.0, 0.0, 2.0, 1.5]), np.array([2.0, 0.0, 0.0, 1.0])]
    check_against_torch(Tensor, torch, lambda a, b: a**b, None, arrays=arrays)


# ------------------------------------------------------------------------------ shape ops

RESHAPES = [((2, 3, 4), (6, 4)), ((4, 6), (2, 2, 6)), ((6,), (1, 6)), ((2, 3), (6,)), ((1,), ())]


@pytest.mark.parametrize(("shape", "new_shape"), RESHAPES, ids=str)
def test_reshape(ops, Tensor, torch, shape, new_shape):
    check_against_torch(
        Tensor,
        torch,
        lambda a: a.reshape(new_shape),
        [shape],
        torch_fn=lambda a: a.reshape(new_shape),
    )
    check_against_torch(
        Tensor,
        torch,
        lambda a: ops.reshape(a, new_shape),
        [shape],
        torch_fn=lambda a: a.reshape(new_shape),
    )


TRANSPOSES = [
    ((3, 4), None),
    ((2, 3, 4), None),
    ((2, 1, 3, 5), None),
    ((3, 2, 5), (1, 2, 0)),
    ((2, 3, 4), (1, 2, 0)),
    ((2, 3, 4), (2, 0, 1)),
    ((2, 3, 4), (0, 2, 1)),
    ((2, 3, 4, 5), (3, 1, 0, 2)),
    ((3, 4), (1, 0)),
]


@pytest.mark.parametrize(("shape", "axes"), TRANSPOSES, ids=str)
def test_transpose(ops, Tensor, torch, shape, axes):
    def theirs(a):
        return a.transpose(-1, -2) if axes is None else a.permute(*axes)

    out = check_against_torch(Tensor, torch, lambda a: a.transpose(axes), [shape], torch_fn=theirs)
    assert isinstance(out._op, ops.Transpose)
    check_against_torch(Tensor, torch, lambda a: ops.transpose(a, axes), [shape], torch_fn=theirs)


def test_transpose_default_swaps_last_two_axes(Tensor):
    assert Tensor(np.zeros((2, 3, 4))).transpose().shape == (2, 4, 3)
    assert Tensor(np.zeros((3, 2, 5))).transpose((1, 2, 0)).shape == (2, 5, 3)


SUMS = [
    ((2, 3, 4), None),
    ((2, 3, 4), 0),
    ((2, 3, 4), 1),
    ((2, 3, 4), 2),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (1,)),
    ((2, 3, 4), (0, 1, 2)),
    ((5,), 0),
    ((5,), None),
    ((3, 1), 1),
]


@pytest.mark.parametrize(("shape", "axes"), SUMS, ids=str)
def test_summation(ops, Tensor, torch, shape, axes):
    def theirs(a):
        return a.sum() if axes is None else a.sum(dim=axes)

    out = check_against_torch(Tensor, torch, lambda a: a.sum(axes), [shape], torch_fn=theirs)
    assert isinstance(out._op, ops.Summation)
    assert isinstance(out.data, np.ndarray)
    check_against_torch(Tensor, torch, lambda a: ops.summation(a, axes), [shape], torch_fn=theirs)


BROADCASTS = [
    ((3,), (2, 3)),
    ((3, 1), (3, 4)),
    ((1, 4), (2, 3, 4)),
    ((), (2, 2)),
    ((2, 1, 3), (4, 2, 5, 3)),
    ((2, 3), (2, 3)),
]


@pytest.mark.parametrize(("shape", "target"), BROADCASTS, ids=str)
def test_broadcast_to(ops, Tensor, torch, shape, target):
    out = check_against_torch(
        Tensor,
        torch,
        lambda a: a.broadcast_to(target),
        [shape],
        torch_fn=lambda a: a.broadcast_to(target),
    )
    assert isinstance(out._op, ops.BroadcastTo)
    check_against_torch(
        Tensor,
        torch,
        lambda a: ops.broadcast_to(a, target),
        [shape],
        torch_fn=lambda a: a.broadcast_to(target),
    )


MATMULS = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)),
    ((4, 5), (2, 5, 3)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 1)),
    ((1, 4), (4, 1)),
    ((4,), (4, 2)),  # 1-D operands, beyond the >= 2-D contract
    ((3, 4), (4,)),
]


@pytest.mark.parametrize(("shape_a", "shape_b"), MATMULS, ids=str)
def test_matmul(ops, Tensor, torch, shape_a, shape_b):
    shapes = [shape_a, shape_b]
    out = check_against_torch(Tensor, torch, lambda a, b: a @ b, shapes)
    assert isinstance(out._op, ops.MatMul)
    check_against_torch(
        Tensor, torch, lambda a, b: a.matmul(b), shapes, torch_fn=lambda a, b: a @ b
    )
    check_against_torch(Tensor, torch, ops.matmul, shapes, torch_fn=torch.matmul)


def test_matmul_batched_shapes(Tensor):
    out = Tensor(np.ones((2, 3, 4))) @ Tensor(np.ones((4, 5)))
    assert out.shape == (2, 3, 5)
    out.sum().backward()
    assert out._inputs[0].grad.shape == (2, 3, 4)
    assert out._inputs[1].grad.shape == (4, 5)
    np.testing.assert_array_equal(out._inputs[1].grad.data, np.full((4, 5), 6.0))


# ----------------------------------------------------------------------------- scalar ops

SCALAR_EXPRESSIONS = {
    "t+3": (lambda t: t + 3, "AddScalar", 3, "any"),
    "3+t": (lambda t: 3 + t, "AddScalar", 3, "any"),
    "t+0.5": (lambda t: t + 0.5, "AddScalar", 0.5, "any"),
    "t-3": (lambda t: t - 3, "AddScalar", -3, "any"),
    "3-t": (lambda t: 3 - t, "AddScalar", 3, "any"),
    "t*3": (lambda t: t * 3, "MulScalar", 3, "any"),
    "3*t": (lambda t: 3 * t, "MulScalar", 3, "any"),
    "t*-0.5": (lambda t: t * -0.5, "MulScalar", -0.5, "any"),
    "t/3": (lambda t: t / 3, "DivScalar", 3, "any"),
    "3/t": (lambda t: 3 / t, "MulScalar", 3, "nonzero"),
    "t**3": (lambda t: t**3, "PowerScalar", 3, "any"),
    "t**2": (lambda t: t**2, "PowerScalar", 2, "any"),
    "t**-1": (lambda t: t**-1, "PowerScalar", -1, "nonzero"),
    "t**0.5": (lambda t: t**0.5, "PowerScalar", 0.5, "positive"),
    "t**-1.5": (lambda t: t**-1.5, "PowerScalar", -1.5, "positive"),
}


@pytest.mark.parametrize("shape", [(4,), (2, 3)], ids=str)
@pytest.mark.parametrize("name", list(SCALAR_EXPRESSIONS))
def test_scalar_op(ops, Tensor, torch, name, shape):
    fn, op_name, scalar, domain = SCALAR_EXPRESSIONS[name]
    out = check_against_torch(Tensor, torch, fn, [shape], domain=domain)
    assert type(out._op).__name__ == op_name
    assert out._op.scalar == scalar


def test_scalar_routing_shapes_the_graph(ops, Tensor):
    t = Tensor([1.0, 2.0])
    rsub = 3 - t
    assert isinstance(rsub._op, ops.AddScalar) and rsub._op.scalar == 3
    assert isinstance(rsub._inputs[0]._op, ops.Negate)
    rdiv = 3 / t
    assert isinstance(rdiv._op, ops.MulScalar) and rdiv._op.scalar == 3
    inner = rdiv._inputs[0]
    assert isinstance(inner._op, ops.PowerScalar) and inner._op.scalar == -1
    assert isinstance((t**t)._op, ops.Pow)
    assert isinstance((-t)._op, ops.Negate)
    assert not hasattr(Tensor, "__rpow__")


def test_scalar_function_forms(ops, Tensor, torch):
    check_against_torch(
        Tensor, torch, lambda a: ops.add_scalar(a, 2.5), [(3,)], torch_fn=lambda a: a + 2.5
    )
    check_against_torch(
        Tensor, torch, lambda a: ops.mul_scalar(a, 2.5), [(3,)], torch_fn=lambda a: a * 2.5
    )
    check_against_torch(
        Tensor, torch, lambda a: ops.divide_scalar(a, 2.5), [(3,)], torch_fn=lambda a: a / 2.5
    )
    check_against_torch(
        Tensor, torch, lambda a: ops.power_scalar(a, 3), [(3,)], torch_fn=lambda a: a**3
    )


def test_array_operands_are_constants(Tensor):
    t = Tensor([1.0, 2.0], dtype="float64")
    out = t * np.array([3.0, 4.0]) + [1.0, 1.0]
    out.backward()
    np.testing.assert_array_equal(out.data, [4.0, 9.0])
    np.testing.assert_array_equal(t.grad.data, [3.0, 4.0])
    flipped = np.array([10.0, 10.0]) - t
    assert isinstance(flipped, Tensor)
    np.testing.assert_array_equal(flipped.data, [9.0, 8.0])


# ---------------------------------------------------------------------- backward and ledger


def test_ledger_sums_a_plus_a(Tensor):
    a = Tensor([1.0, -2.0, 3.0])
    (a + a).backward()
    np.testing.assert_array_equal(a.grad.data, [2.0, 2.0, 2.0])


def test_ledger_sums_a_times_a(Tensor):
    a = Tensor([1.0, -2.0, 3.0])
    (a * a).backward()
    np.testing.assert_array_equal(a.grad.data, [2.0, -4.0, 6.0])


def test_ledger_sums_a_diamond(Tensor, torch):
    def diamond(a, b):
        left = a * 2.0
        right = (a * b).exp()
        top = left + right
        return (top * a).sum() + (a / b).sum()

    check_against_torch(Tensor, torch, diamond, [(2, 3), (3,)])
    check_against_torch(
        Tensor,
        torch,
        lambda a, b: (a @ b) @ (a @ b).transpose() - a.sum(),
        [(3, 3), (3, 3)],
        torch_fn=lambda a, b: (a @ b) @ (a @ b).transpose(-1, -2) - a.sum(),
    )


def test_shared_operand_through_broadcasting(Tensor, torch):
    check_against_torch(
        Tensor, torch, lambda a, b: (a + b) * (a - b) / (b * b + 1.0), [(2, 1, 3), (4, 1)]
    )


def test_backward_sets_intermediate_grads(Tensor):
    a = Tensor([[1.0, 2.0], [3.0, 4.0]])
    hidden = a * 3
    out = hidden.sum()
    out.backward()
    np.testing.assert_array_equal(out.grad.data, 1.0)
    np.testing.assert_array_equal(hidden.grad.data, np.ones((2, 2)))
    np.testing.assert_array_equal(a.grad.data, np.full((2, 2), 3.0))


def test_backward_skips_tensors_without_requires_grad(Tensor):
    a = Tensor([1.0, 2.0])
    frozen = Tensor([5.0, 7.0], requires_grad=False)
    (a * frozen).sum().backward()
    np.testing.assert_array_equal(a.grad.data, [5.0, 7.0])
    assert frozen.grad is None


def test_backward_default_grad_is_ones_of_output_shape(Tensor):
    a = Tensor(np.arange(6.0).reshape(2, 3))
    out = a * a
    out.backward()
    np.testing.assert_array_equal(a.grad.data, 2 * np.arange(6.0).reshape(2, 3))


def test_backward_accepts_an_explicit_grad(Tensor):
    a = Tensor([1.0, 2.0, 3.0])
    out = a * 2
    out.backward(Tensor([1.0, 0.0, -1.0]))
    np.testing.assert_array_equal(a.grad.data, [2.0, 0.0, -2.0])
    out.backward(np.array([3.0, 3.0, 3.0]))
    np.testing.assert_array_equal(a.grad.data, [6.0, 6.0, 6.0])


def test_backward_on_a_long_chain_is_iterative(Tensor):
    a = Tensor([1.0])
    node = a
    for _ in range(3 * sys.getrecursionlimit()):
        node = node + 1.0
    node.backward()
    np.testing.assert_array_equal(a.grad.data, [1.0])


def test_grads_are_plain_tensors(Tensor):
    a = Tensor([1.0, 2.0])
    b = Tensor([3.0, 4.0])
    (a * b).sum().backward()
    for t in (a, b):
        assert isinstance(t.grad, Tensor)
        assert t.grad._op is None
