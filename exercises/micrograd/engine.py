"""A scalar autograd engine.

Every number in a computation is wrapped in a ``Value``. Each operation on Values builds a new
Value that remembers its operands (``_prev``) and carries a small closure (``_backward``) that
knows how to push the output's gradient back into those operands using the chain rule.
``Value.backward()`` then runs all of those closures, output first, in reverse topological order.

Your tasks are every function below that raises ``NotImplementedError``.
"""

import math


class Value:
    """One scalar node of a computation graph.

    Attributes:
        data: the number this node holds (always a Python float).
        grad: d(root)/d(this node), filled in by ``backward()``; starts at 0.0.
        _backward: closure that adds this node's contribution to its operands' ``grad``;
            does nothing for leaves.
        _prev: the operand Values this node was computed from, as a tuple in operand order.
            (A tuple, not a set: the order stays deterministic and a node used twice, as in
            ``a + a``, appears twice.)
        _op: a short name of the operation that produced this node ('' for leaves).
        label: an optional name, handy when printing or drawing graphs.
    """

    def __init__(self, data, _children=(), _op="", label=""):
        self.data = float(data)
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    # ----------------------------------------------------------------- primitive operations

    def __add__(self, other):
        """Return ``self + other``.

        The local derivative of a sum with respect to either operand is 1, so the closure passes
        ``out.grad`` through unchanged. Accumulate with ``+=``: ``a + a`` must give ``a`` a
        gradient of 2, one contribution per operand slot.
        """
        other = other if isinstance(other, Value) else Value(other)
        # graded by micrograd.ops.add
        raise NotImplementedError(
            "build the sum node with _prev (self, other) and a _backward closure"
        )

    def __mul__(self, other):
        """Return ``self * other``.

        Each operand's local derivative is the *other* operand's value.
        """
        other = other if isinstance(other, Value) else Value(other)
        # graded by micrograd.ops.mul
        raise NotImplementedError(
            "build the product node; each operand's gradient uses the other's data"
        )

    def __pow__(self, k):
        """Return ``self ** k`` for a plain int or float exponent ``k`` (not a Value).

        Power rule: d(x**k)/dx = k * x**(k - 1). The exponent is a constant, so only ``self``
        receives a gradient and ``_prev`` holds just ``self``.
        """
        assert isinstance(k, (int, float)), "only int or float exponents are supported"
        # graded by micrograd.ops.pow
        raise NotImplementedError(
            "build x**k with _prev (self,) and the power-rule _backward closure"
        )

    def tanh(self):
        """Return tanh(self), computed with ``math.tanh`` (stable for large inputs).

        d tanh(x)/dx = 1 - tanh(x)**2, which can be written with the output value alone.
        """
        # graded by micrograd.ops.tanh
        raise NotImplementedError("compute t = math.tanh(x); the local derivative is 1 - t**2")

    def exp(self):
        """Return e**self. Its derivative is itself: d exp(x)/dx = exp(x)."""
        # graded by micrograd.ops.exp
        raise NotImplementedError(
            "compute math.exp(x); the local derivative is the output's own data"
        )

    def relu(self):
        """Return max(0, self).

        The derivative is 1 where the input is positive and 0 elsewhere, including exactly at 0.
        """
        # graded by micrograd.ops.relu
        raise NotImplementedError("output x if x > 0 else 0.0; gradient flows only where x > 0")

    # ------------------------------------------- operations composed from the primitives above

    def __neg__(self):
        """Return ``-self``. Hint: multiply by -1 so ``__mul__`` does the gradient work."""
        # graded by micrograd.sugar
        raise NotImplementedError("return self multiplied by -1")

    def __sub__(self, other):
        """Return ``self - other``, built from addition and negation."""
        other = other if isinstance(other, Value) else Value(other)
        # graded by micrograd.sugar
        raise NotImplementedError("return self plus the negation of other")

    def __truediv__(self, other):
        """Return ``self / other``, built as ``self * other**-1``."""
        other = other if isinstance(other, Value) else Value(other)
        # graded by micrograd.sugar
        raise NotImplementedError("return self times other to the power -1")

    def __radd__(self, other):
        """Return ``other + self`` when ``other`` is a plain number (e.g. ``2 + a``)."""
        other = other if isinstance(other, Value) else Value(other)
        # graded by micrograd.sugar
        raise NotImplementedError("return other plus self using __add__")

    def __rmul__(self, other):
        """Return ``other * self`` when ``other`` is a plain number (e.g. ``2 * a``)."""
        other = other if isinstance(other, Value) else Value(other)
        # graded by micrograd.sugar
        raise NotImplementedError("return other times self using __mul__")

    def __rsub__(self, other):
        """Return ``other - self`` when ``other`` is a plain number (e.g. ``2 - a``)."""
        other = other if isinstance(other, Value) else Value(other)
        # graded by micrograd.sugar
        raise NotImplementedError("return other plus the negation of self")

    def __rtruediv__(self, other):
        """Return ``other / self`` when ``other`` is a plain number (e.g. ``2 / a``)."""
        other = other if isinstance(other, Value) else Value(other)
        # graded by micrograd.sugar
        raise NotImplementedError("return other times self to the power -1")

    # ------------------------------------------------------------------------- backpropagation

    def backward(self):
        """Fill in ``grad`` on every node this Value depends on.

        Get the order from the module-level ``build_topo(self)`` (call it by that name, so it
        can be swapped out), set this node's grad to 1.0, then call each node's ``_backward``
        from the last node of the order to the first. Never reset any gradient here: calling
        ``backward()`` twice adds the second pass on top of the first.
        """
        # graded by micrograd.backward
        raise NotImplementedError(
            "order = build_topo(self); seed self.grad = 1.0; run _backward in reverse"
        )


def build_topo(root):
    """Return every node reachable from ``root`` through ``_prev``, in topological order.

    Each node must appear exactly once, after all of its operands, and ``root`` must be last.
    Write it without recursion (keep your own stack), so a chain of 100,000 nodes works at
    Python's default recursion limit, and remember visited nodes by identity, ``id(node)``,
    never by hashing or comparing Values.
    """
    # graded by micrograd.topo
    raise NotImplementedError(
        "iterative post-order DFS over _prev with an explicit stack and id() visits"
    )


def zero_grad(root):
    """Set ``grad`` back to 0.0 on ``root`` and every node reachable from it.

    Like ``build_topo``, walk the graph with an explicit stack and an ``id()``-based visited set.
    """
    # graded by micrograd.zero_grad
    raise NotImplementedError("walk the graph with a stack, setting each node's grad to 0.0 once")
