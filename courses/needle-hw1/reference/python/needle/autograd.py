"""needle's computational graph: Values, Ops, Tensors, and reverse-mode differentiation.

A ``Tensor`` is a node of the graph. A leaf holds data given by the user (``op`` is None); any
other node remembers the ``op`` that made it and its operands (``inputs``), and holds the
result in ``cached_data``. Ops run eagerly: calling one computes its output right away.

Two parts are yours to write at the bottom of this file: the topological sort of a graph
(``find_topo_sort`` with its helper ``topo_sort_dfs``) and the backward pass
(``compute_gradient_of_variables``), which ``Tensor.backward`` calls.
"""

from typing import Union

from .backend_numpy import Device, NDArray, array_api, cpu

# Ops compute as soon as they are called (no lazy evaluation in homework 1).
LAZY_MODE = False


class Op:
    """An operation: how to compute its output, and how to send an adjoint back."""

    def __call__(self, *args):
        raise NotImplementedError()

    def compute(self, *args: NDArray) -> NDArray:
        """The forward pass, on the operands' raw arrays; returns the output array."""
        raise NotImplementedError()

    def gradient(self, out_grad: "Value", node: "Value") -> Union["Value", tuple["Value", ...]]:
        """The partial adjoints of the operands, given the adjoint of the output.

        ``out_grad`` is the adjoint of ``node``, the output this op produced (its operands are
        ``node.inputs``). Returns one Value for a one-operand op, otherwise a tuple with one
        Value per operand, each shaped like its operand.
        """
        raise NotImplementedError()

    def gradient_as_tuple(self, out_grad: "Value", node: "Value") -> tuple["Value", ...]:
        """``gradient``, always as a tuple (one entry per operand)."""
        result = self.gradient(out_grad, node)
        if isinstance(result, tuple):
            return result
        if isinstance(result, list):
            return tuple(result)
        return (result,)


class TensorOp(Op):
    """An op whose output is a Tensor."""

    def __call__(self, *args):
        return Tensor.make_from_op(self, args)


class Value:
    """A node of the computational graph."""

    op: Op | None
    inputs: list["Value"]
    cached_data: NDArray
    requires_grad: bool

    def realize_cached_data(self):
        """This node's data, computed from its operands' the first time it is asked for."""
        if self.cached_data is None:
            self.cached_data = self.op.compute(*[x.realize_cached_data() for x in self.inputs])
        return self.cached_data

    def is_leaf(self):
        return self.op is None

    def _init(
        self,
        op: Op | None,
        inputs: list["Value"],
        *,
        num_outputs: int = 1,
        cached_data: NDArray | None = None,
        requires_grad: bool | None = None,
    ):
        if requires_grad is None:
            requires_grad = any(x.requires_grad for x in inputs)
        self.op = op
        self.inputs = inputs
        self.num_outputs = num_outputs
        self.cached_data = cached_data
        self.requires_grad = requires_grad

    @classmethod
    def make_const(cls, data, *, requires_grad=False):
        value = cls.__new__(cls)
        value._init(None, [], cached_data=data, requires_grad=requires_grad)
        return value

    @classmethod
    def make_from_op(cls, op: Op, inputs: list["Value"]):
        value = cls.__new__(cls)
        value._init(op, inputs)
        if not LAZY_MODE:
            if not value.requires_grad:
                return value.detach()
            value.realize_cached_data()
        return value


class Tensor(Value):
    """An n-dimensional array that records how it was computed."""

    grad: "Tensor"

    def __init__(
        self,
        array,
        *,
        device: Device | None = None,
        dtype=None,
        requires_grad=True,
        **kwargs,
    ):
        if isinstance(array, Tensor):
            device = array.device if device is None else device
            dtype = array.dtype if dtype is None else dtype
            if device == array.device and dtype == array.dtype:
                cached_data = array.realize_cached_data()
            else:
                cached_data = Tensor._array_from_numpy(array.numpy(), device=device, dtype=dtype)
        else:
            device = device if device else cpu()
            cached_data = Tensor._array_from_numpy(array, device=device, dtype=dtype)
        self._init(None, [], cached_data=cached_data, requires_grad=requires_grad)

    @staticmethod
    def _array_from_numpy(numpy_array, device, dtype):
        # dtype=None keeps the array's own dtype: float64 data stays float64.
        return array_api.array(numpy_array, dtype=dtype)

    @staticmethod
    def make_from_op(op: Op, inputs: list["Value"]):
        tensor = Tensor.__new__(Tensor)
        tensor._init(op, inputs)
        if not LAZY_MODE:
            if not tensor.requires_grad:
                return tensor.detach()
            tensor.realize_cached_data()
        return tensor

    @staticmethod
    def make_const(data, requires_grad=False):
        tensor = Tensor.__new__(Tensor)
        if isinstance(data, Tensor):
            data = data.realize_cached_data()
        tensor._init(None, [], cached_data=data, requires_grad=requires_grad)
        return tensor

    @property
    def data(self):
        """The same data as a new leaf, cut off from the graph."""
        return self.detach()

    @data.setter
    def data(self, value):
        assert isinstance(value, Tensor)
        assert value.dtype == self.dtype, f"{value.dtype} {self.dtype}"
        self.cached_data = value.realize_cached_data()

    def detach(self):
        """A new leaf sharing this tensor's data, with no graph behind it."""
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

    def backward(self, out_grad=None):
        """Compute the adjoint of every node this tensor depends on, into each node's .grad.

        ``out_grad`` is the adjoint of this tensor; by default ones of its shape and dtype
        (the gradient of the sum of its entries).
        """
        if out_grad is None:
            out_grad = Tensor(
                array_api.ones(self.shape, dtype=self.dtype), dtype=self.dtype, requires_grad=False
            )
        compute_gradient_of_variables(self, out_grad)

    def __repr__(self):
        return "needle.Tensor(" + str(self.realize_cached_data()) + ")"

    def __str__(self):
        return str(self.realize_cached_data())

    def numpy(self):
        return self.realize_cached_data()

    # Operators. A Tensor operand makes an elementwise op; a Python number makes a scalar op.
    # Operands of an elementwise op must have the same shape (use broadcast_to first).

    def __add__(self, other):
        if isinstance(other, Tensor):
            return ops.EWiseAdd()(self, other)
        return ops.AddScalar(other)(self)

    def __mul__(self, other):
        if isinstance(other, Tensor):
            return ops.EWiseMul()(self, other)
        return ops.MulScalar(other)(self)

    def __pow__(self, other):
        if isinstance(other, Tensor):
            return ops.EWisePow()(self, other)
        return ops.PowerScalar(other)(self)

    def __sub__(self, other):
        # a - b is a + (-b): two nodes, as in the starter code.
        if isinstance(other, Tensor):
            return ops.EWiseAdd()(self, ops.Negate()(other))
        return ops.AddScalar(-other)(self)

    def __rsub__(self, other):
        # other - self, for a number on the left: (-self) + other.
        return ops.AddScalar(other)(ops.Negate()(self))

    def __truediv__(self, other):
        if isinstance(other, Tensor):
            return ops.EWiseDiv()(self, other)
        return ops.DivScalar(other)(self)

    def __matmul__(self, other):
        return ops.MatMul()(self, other)

    def __rmatmul__(self, other):
        if not isinstance(other, Tensor):
            other = Tensor(other, dtype=self.dtype, requires_grad=False)
        return ops.MatMul()(other, self)

    def matmul(self, other):
        return ops.MatMul()(self, other)

    def sum(self, axes=None):
        return ops.Summation(axes)(self)

    def broadcast_to(self, shape):
        return ops.BroadcastTo(shape)(self)

    def reshape(self, shape):
        return ops.Reshape(shape)(self)

    def __neg__(self):
        return ops.Negate()(self)

    def transpose(self, axes=None):
        return ops.Transpose(axes)(self)

    __radd__ = __add__
    __rmul__ = __mul__


def compute_gradient_of_variables(output_tensor, out_grad):
    """Backpropagate from ``output_tensor``, storing every node's adjoint in its ``.grad``.

    ``out_grad`` is the adjoint of ``output_tensor`` (same shape). Keep a dict from each node
    to the list of partial adjoints it has received so far, starting with ``[out_grad]`` for
    ``output_tensor``. Visit the nodes in reverse topological order (``find_topo_sort``, then
    reversed): when a node is reached every partial adjoint it will get is in its list, so its
    adjoint is their sum (``sum_node_list``); store that in ``node.grad``. Unless the node is a
    leaf, ask its op for its operands' partial adjoints
    (``node.op.gradient_as_tuple(node.grad, node)``) and append each to its operand's list. A
    node used by several others (or twice by one) collects one partial adjoint per use.

    The adjoints are Tensors computed with needle ops, so they can be differentiated again.
    """
    # BEGIN SOLUTION [needle.backward, needle.accumulate]:
    #   seed the dict with out_grad, then walk the reverse topological order: each node's
    #   .grad is the sum of its list, and its op appends its operands' partial adjoints
    node_to_output_grads_list: dict[Tensor, list[Tensor]] = {output_tensor: [out_grad]}
    reverse_topo_order = list(reversed(find_topo_sort([output_tensor])))
    for node in reverse_topo_order:
        node.grad = sum_node_list(node_to_output_grads_list[node])
        if node.is_leaf():
            continue
        partials = node.op.gradient_as_tuple(node.grad, node)
        for operand, partial in zip(node.inputs, partials, strict=True):
            node_to_output_grads_list.setdefault(operand, []).append(partial)
    # END SOLUTION


def find_topo_sort(node_list: list[Value]) -> list[Value]:
    """The nodes that ``node_list`` depends on (themselves included) in topological order.

    Every node comes after all of its operands, and each node appears exactly once. Run a
    post-order depth-first search (``topo_sort_dfs``) from each node of ``node_list`` in turn,
    all sharing one visited set and one output list.
    """
    # BEGIN SOLUTION [needle.backward; needle.accumulate]:
    #   start topo_sort_dfs from each given node, sharing one visited set and one order list
    visited = set()
    topo_order = []
    for node in node_list:
        topo_sort_dfs(node, visited, topo_order)
    return topo_order
    # END SOLUTION


def topo_sort_dfs(node, visited, topo_order):
    """Post-order DFS: append ``node`` to ``topo_order`` after all of its operands.

    ``visited`` holds the nodes already walked: a node reached again along another path (a
    shared subexpression) is skipped, so it is walked, and appended, once. Operands are walked
    in the order of ``node.inputs``.
    """
    # BEGIN SOLUTION [needle.backward; needle.accumulate]:
    #   return at once for a visited node; otherwise mark it, walk its operands, then append it
    if node in visited:
        return
    visited.add(node)
    for operand in node.inputs:
        topo_sort_dfs(operand, visited, topo_order)
    topo_order.append(node)
    # END SOLUTION


##############################
####### Helper Methods #######
##############################


def sum_node_list(node_list):
    """The sum of a list of Tensors, built with ``+`` (EWiseAdd) from the left."""
    from functools import reduce
    from operator import add

    return reduce(add, node_list)


from . import ops  # noqa: E402  (the ops import Tensor from this module)
