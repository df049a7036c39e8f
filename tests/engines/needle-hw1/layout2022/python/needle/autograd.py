"""Graph nodes and reverse-mode differentiation (2022 layout: the devices live here too).

Differences from the reference, on purpose: ``inputs`` is a list; the topological sort is an
explicit-stack walk (no recursion, so a 100,000-node chain is fine) that still yields the
same post-order; the backward pass keeps a running sum per node instead of a list.
"""

import numpy

import needle

# Build graphs eagerly: each op computes its output when it is called.
LAZY_MODE = False
NDArray = numpy.ndarray
array_api = numpy


class Device:
    """Where data lives."""


class CPUDevice(Device):
    def __repr__(self):
        return "needle.cpu()"

    def __hash__(self):
        return hash("cpu")

    def __eq__(self, other):
        return isinstance(other, CPUDevice)

    def enabled(self):
        return True


def cpu():
    return CPUDevice()


def all_devices():
    return [CPUDevice()]


class Op:
    def __call__(self, *args):
        raise NotImplementedError()

    def compute(self, *args):
        raise NotImplementedError()

    def gradient(self, out_grad, node):
        raise NotImplementedError()

    def gradient_as_tuple(self, out_grad, node):
        grads = self.gradient(out_grad, node)
        if isinstance(grads, (tuple, list)):
            return tuple(grads)
        return (grads,)


class TensorOp(Op):
    def __call__(self, *args):
        return Tensor.make_from_op(self, list(args))


class Value:
    op = None
    inputs = ()
    cached_data = None
    requires_grad = False

    def realize_cached_data(self):
        if self.cached_data is None:
            arrays = [operand.realize_cached_data() for operand in self.inputs]
            self.cached_data = self.op.compute(*arrays)
        return self.cached_data

    def is_leaf(self):
        return self.op is None

    def _init(self, op, inputs, *, num_outputs=1, cached_data=None, requires_grad=None):
        self.op = op
        self.inputs = list(inputs)
        self.num_outputs = num_outputs
        self.cached_data = cached_data
        if requires_grad is None:
            requires_grad = False
            for operand in self.inputs:
                requires_grad = requires_grad or operand.requires_grad
        self.requires_grad = requires_grad

    @classmethod
    def make_const(cls, data, *, requires_grad=False):
        made = object.__new__(cls)
        made._init(None, [], cached_data=data, requires_grad=requires_grad)
        return made

    @classmethod
    def make_from_op(cls, op, inputs):
        made = object.__new__(cls)
        made._init(op, inputs)
        if LAZY_MODE:
            return made
        if made.requires_grad:
            made.realize_cached_data()
            return made
        return made.detach()


class Tensor(Value):
    def __init__(self, array, *, device=None, dtype=None, requires_grad=True, **kwargs):
        if isinstance(array, Tensor):
            source = array.realize_cached_data()
            data = source if dtype is None or source.dtype == dtype else source.astype(dtype)
        else:
            data = numpy.array(array, dtype=dtype)
        self._init(None, [], cached_data=data, requires_grad=requires_grad)

    @staticmethod
    def make_from_op(op, inputs):
        made = object.__new__(Tensor)
        made._init(op, inputs)
        if LAZY_MODE:
            return made
        if made.requires_grad:
            made.realize_cached_data()
            return made
        return made.detach()

    @staticmethod
    def make_const(data, requires_grad=False):
        if isinstance(data, Tensor):
            data = data.realize_cached_data()
        made = object.__new__(Tensor)
        made._init(None, [], cached_data=data, requires_grad=requires_grad)
        return made

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        assert isinstance(value, Tensor) and value.dtype == self.dtype
        self.cached_data = value.realize_cached_data()

    def detach(self):
        return Tensor.make_const(self.realize_cached_data())

    @property
    def shape(self):
        return self.realize_cached_data().shape

    @property
    def dtype(self):
        return self.realize_cached_data().dtype

    @property
    def device(self):
        return cpu()

    def numpy(self):
        return self.realize_cached_data()

    def backward(self, out_grad=None):
        if out_grad is None:
            seed = numpy.ones(self.shape, dtype=self.dtype)
            out_grad = Tensor.make_const(seed)
        compute_gradient_of_variables(self, out_grad)

    def __repr__(self):
        return f"needle.Tensor({self.realize_cached_data()})"

    def __str__(self):
        return str(self.realize_cached_data())

    def __add__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWiseAdd()(self, other)
        return needle.ops.AddScalar(other)(self)

    def __radd__(self, other):
        return self.__add__(other)

    def __mul__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWiseMul()(self, other)
        return needle.ops.MulScalar(other)(self)

    def __rmul__(self, other):
        return self.__mul__(other)

    def __pow__(self, other):
        if isinstance(other, Tensor):
            raise NotImplementedError()  # 2022's homework has no EWisePow
        return needle.ops.PowerScalar(other)(self)

    def __sub__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWiseAdd()(self, needle.ops.Negate()(other))
        return needle.ops.AddScalar(-other)(self)

    def __rsub__(self, other):
        return needle.ops.AddScalar(other)(needle.ops.Negate()(self))

    def __truediv__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWiseDiv()(self, other)
        return needle.ops.DivScalar(other)(self)

    def __matmul__(self, other):
        return needle.ops.MatMul()(self, other)

    def __rmatmul__(self, other):
        left = other if isinstance(other, Tensor) else Tensor.make_const(numpy.asarray(other))
        return needle.ops.MatMul()(left, self)

    def matmul(self, other):
        return self.__matmul__(other)

    def __neg__(self):
        return needle.ops.Negate()(self)

    def sum(self, axes=None):
        return needle.ops.Summation(axes)(self)

    def broadcast_to(self, shape):
        return needle.ops.BroadcastTo(shape)(self)

    def reshape(self, shape):
        return needle.ops.Reshape(shape)(self)

    def transpose(self, axes=None):
        return needle.ops.Transpose(axes)(self)


def compute_gradient_of_variables(output_tensor, out_grad):
    """Reverse accumulation: every node reached from output_tensor gets its adjoint in .grad."""
    order = find_topo_sort([output_tensor])
    adjoint = {id(output_tensor): out_grad}
    for node in order[::-1]:
        total = adjoint.pop(id(node))
        node.grad = total
        if node.op is None:
            continue
        contributions = node.op.gradient_as_tuple(total, node)
        for operand, contribution in zip(node.inputs, contributions, strict=True):
            key = id(operand)
            if key in adjoint:
                adjoint[key] = adjoint[key] + contribution
            else:
                adjoint[key] = contribution


def find_topo_sort(node_list):
    """Post-order of everything node_list depends on: operands before users, each node once."""
    visited = set()
    topo_order = []
    for node in node_list:
        topo_sort_dfs(node, visited, topo_order)
    return topo_order


def topo_sort_dfs(node, visited, topo_order):
    """Depth-first post-order from node with an explicit stack; visited holds node ids.

    Operands are walked in the order of ``inputs``, so the order is the one a recursive DFS
    would give.
    """
    if id(node) in visited:
        return
    visited.add(id(node))
    pending = [(node, 0)]
    while pending:
        current, next_operand = pending[-1]
        operands = current.inputs
        while next_operand < len(operands) and id(operands[next_operand]) in visited:
            next_operand += 1
        if next_operand == len(operands):
            pending.pop()
            topo_order.append(current)
            continue
        child = operands[next_operand]
        pending[-1] = (current, next_operand + 1)
        visited.add(id(child))
        pending.append((child, 0))


def sum_node_list(node_list):
    """Left-to-right sum of Tensors with EWiseAdd."""
    total = node_list[0]
    for item in node_list[1:]:
        total = total + item
    return total
