"""The ``Tensor`` of the babygrad book, chapter 3: a numpy array that remembers the op that made
it (``_op``) and the tensors it was made from (``_inputs``).

As the book writes it, every argument after ``data`` is a keyword, the values are float32
unless asked otherwise, and a tensor requires no gradient unless created with
``requires_grad=True``. Operators wrap a plain number in a Tensor and call the op; the book's
Exercise 3.3 and sections 3.4.1 to 3.4.5 add one operator or method per op.
"""

import numpy as np

NDArray = np.ndarray


class Tensor:
    """An n-dimensional array that can take part in automatic differentiation."""

    def __init__(self, data, *, device=None, dtype="float32", requires_grad=False):
        if isinstance(data, Tensor):
            data = data.data
        self.data = np.array(data, dtype=dtype)
        self.device = device
        self.requires_grad = requires_grad
        self.grad = None
        self._op = None
        self._inputs = []

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    def numpy(self):
        return self.data.copy()

    def __repr__(self):
        return f"Tensor({self.data}, requires_grad={self.requires_grad})"

    def __add__(self, other):
        """Addition: a + b"""
        from .ops import Add

        if not isinstance(other, Tensor):
            other = Tensor(other)
        return Add()(self, other)

    def __radd__(self, other):
        """Right addition: 5 + tensor"""
        return self.__add__(other)

    def __mul__(self, other):
        # BEGIN SOLUTION [babygrad.tensor_ops]: wrap a number in a Tensor, then call Mul
        from .ops import Mul

        if not isinstance(other, Tensor):
            other = Tensor(other)
        return Mul()(self, other)
        # END SOLUTION

    def __pow__(self, other):
        # BEGIN SOLUTION [babygrad.tensor_ops]: wrap a number in a Tensor, then call Pow
        from .ops import Pow

        if not isinstance(other, Tensor):
            other = Tensor(other)
        return Pow()(self, other)
        # END SOLUTION

    def __sub__(self, other):
        # BEGIN SOLUTION [babygrad.tensor_ops]: wrap a number in a Tensor, then call Sub
        from .ops import Sub

        if not isinstance(other, Tensor):
            other = Tensor(other)
        return Sub()(self, other)
        # END SOLUTION

    def __truediv__(self, other):
        # BEGIN SOLUTION [babygrad.tensor_ops]: wrap a number in a Tensor, then call Div
        from .ops import Div

        if not isinstance(other, Tensor):
            other = Tensor(other)
        return Div()(self, other)
        # END SOLUTION

    def __neg__(self):
        # BEGIN SOLUTION [babygrad.tensor_ops]: call Negate
        from .ops import Negate

        return Negate()(self)
        # END SOLUTION

    def __matmul__(self, other):
        # BEGIN SOLUTION [babygrad.tensor_ops]: call MatMul
        from .ops import MatMul

        return MatMul()(self, other)
        # END SOLUTION

    def matmul(self, other):
        # BEGIN SOLUTION [babygrad.tensor_ops]: call MatMul
        from .ops import MatMul

        return MatMul()(self, other)
        # END SOLUTION

    def reshape(self, shape):
        # BEGIN SOLUTION [babygrad.tensor_ops]: call Reshape
        from .ops import Reshape

        return Reshape(shape)(self)
        # END SOLUTION

    def transpose(self, axes=None):
        # BEGIN SOLUTION [babygrad.tensor_ops]: call Transpose
        from .ops import Transpose

        return Transpose(axes)(self)
        # END SOLUTION

    def sum(self, axes=None):
        # BEGIN SOLUTION [babygrad.tensor_ops]: call Summation
        from .ops import Summation

        return Summation(axes)(self)
        # END SOLUTION

    def broadcast_to(self, shape):
        # BEGIN SOLUTION [babygrad.tensor_ops]: call BroadcastTo
        from .ops import BroadcastTo

        return BroadcastTo(shape)(self)
        # END SOLUTION

    def backward(self, grad=None):
        """Give every tensor this one depends on its gradient (Exercise 3.11).

        ``grad`` is the upstream gradient of this tensor, ones of its shape when omitted.
        Order the graph depth-first (each tensor after the tensors it was made from), then
        walk it from this tensor back: a tensor's gradient is waiting in the ``grads`` ledger
        when the walk reaches it; add it to ``.grad`` (set it, where ``.grad`` is None: a
        second ``backward()`` adds to what the first left, as the book's own code does), ask its
        op for its inputs' shares (``node._op.backward(out_grad, node)``) and add each share to
        that input's entry.
        """
        # BEGIN SOLUTION [babygrad.backward, babygrad.accumulate]:
        #   a depth-first order, then a ledger keyed by id() that adds every share
        grads = {}
        if grad is None:
            grads[id(self)] = Tensor(np.ones_like(self.data))
        else:
            grads[id(self)] = grad if isinstance(grad, Tensor) else Tensor(grad)

        topo_order = []
        visited = set()

        def build_topo(node):
            stack = [(node, iter(node._inputs))]
            visited.add(id(node))
            while stack:
                current, parents = stack[-1]
                for parent in parents:
                    if id(parent) not in visited:
                        visited.add(id(parent))
                        stack.append((parent, iter(parent._inputs)))
                        break
                else:
                    stack.pop()
                    topo_order.append(current)

        build_topo(self)

        for node in reversed(topo_order):
            out_grad = grads.get(id(node))
            if out_grad is None:
                continue
            node.grad = out_grad if node.grad is None else Tensor(node.grad.data + out_grad.data)
            if node._op is None:
                continue
            parent_grads = node._op.backward(out_grad, node)
            if not isinstance(parent_grads, tuple):
                parent_grads = (parent_grads,)
            for parent, parent_grad in zip(node._inputs, parent_grads, strict=True):
                if id(parent) in grads:
                    grads[id(parent)] = Tensor(grads[id(parent)].data + parent_grad.data)
                else:
                    grads[id(parent)] = parent_grad
        # END SOLUTION
