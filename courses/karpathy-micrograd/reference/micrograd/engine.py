"""A scalar autograd engine with the API of Andrej Karpathy's micrograd lecture.

A ``Value`` wraps one number. Every operation on Values returns a new Value that records the
Values it was made from (``_prev``), the name of the operation (``_op``) and a closure
(``_backward``) that applies the chain rule for that one operation: it reads the output's
``grad`` and adds the right amount to the ``grad`` of each operand.

``out.backward()`` orders the whole graph behind ``out`` topologically, sets ``out.grad`` to 1
and calls every node's ``_backward``, output first. There is no ``zero_grad``: gradients only
ever grow, so reset them yourself (``v.grad = 0``) before running ``backward()`` again.

``tanh`` and ``exp`` are the lecture's; ``relu`` and the reflected ``-`` and ``/`` the
repository's: the reference has all of them, so it answers for either edition.

Your tasks are the parts of each method that raise ``NotImplementedError``.
"""

import math


class Value:
    """One scalar node of a computation graph.

    Attributes:
        data: the number this node holds, stored as given (an int stays an int).
        grad: d(output)/d(this node), filled in by ``backward()``; 0 until then.
        _backward: the closure that pushes this node's ``grad`` into its operands' ``grad``
            with ``+=``; a do-nothing ``lambda: None`` for leaves.
        _prev: the operands this node was computed from, as a ``set`` (so ``a * a`` has a
            single operand in it, and the order is not defined).
        _op: a short name of the operation that made this node ('' for a leaf).
    """

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    # ----------------------------------------------------------------- primitive operations

    def __add__(self, other):
        """Return ``self + other``; a plain number ``other`` is wrapped in a Value first.

        A sum's local derivative is 1 with respect to each operand, so the closure hands
        ``out.grad`` to both unchanged. It adds (``+=``) rather than assigns: ``a + a`` must
        leave ``a.grad`` at 2, one share for each side of the ``+``.
        """
        other = other if isinstance(other, Value) else Value(other)
        # BEGIN SOLUTION [micrograd.ops.add; micrograd.accumulate]:
        #   make the sum node from both operands with a closure that passes its grad to each
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    def __mul__(self, other):
        """Return ``self * other``; a plain number ``other`` is wrapped in a Value first.

        The local derivative with respect to one factor is the value of the other factor.
        """
        other = other if isinstance(other, Value) else Value(other)
        # BEGIN SOLUTION [micrograd.ops.mul; micrograd.accumulate]:
        #   make the product node; each factor's grad grows by the other factor's data
        #   times the output's grad
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    def __pow__(self, other):
        """Return ``self ** other``, where ``other`` is a plain int or float, never a Value.

        The exponent is a constant, so only ``self`` is an operand (``_prev`` is ``{self}``)
        and only ``self`` gets a gradient, by the power rule: d(x**k)/dx = k * x**(k - 1).
        """
        assert isinstance(other, (int, float)), "the exponent must be an int or a float"
        # BEGIN SOLUTION [micrograd.ops.pow; micrograd.accumulate]:
        #   make the node x**k with self as its only operand and a power-rule closure
        out = Value(self.data**other, (self,), f"**{other}")

        def _backward():
            self.grad += other * self.data ** (other - 1) * out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    def relu(self):
        """Return max(0, self).

        The gradient passes through where the input is positive and is 0 elsewhere, exactly
        at 0 included (an input of 0 gets no gradient).
        """
        # BEGIN SOLUTION [micrograd.ops.relu; micrograd.accumulate]:
        #   output the input where it is positive and 0 otherwise; the closure lets the
        #   output's grad through only where the input is positive
        out = Value(self.data if self.data > 0 else 0, (self,), "ReLU")

        def _backward():
            if self.data > 0:
                self.grad += out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    # ------------------------------------------- operations composed from the primitives above
    # None of these needs a closure of its own: each is written with +, * and **, whose
    # closures already carry the gradient.

    def __neg__(self):
        """Return ``-self``, as ``self`` times -1."""
        # BEGIN SOLUTION [micrograd.sugar]: multiply self by minus one
        return self * -1
        # END SOLUTION

    def __radd__(self, other):
        """Return ``other + self`` for a plain number on the left (``2 + a``)."""
        other = other if isinstance(other, Value) else Value(other)
        # BEGIN SOLUTION [micrograd.sugar]: add self to other with the + of Values
        return other + self
        # END SOLUTION

    def __sub__(self, other):
        """Return ``self - other``, as ``self`` plus the negation of ``other``."""
        other = other if isinstance(other, Value) else Value(other)
        # BEGIN SOLUTION [micrograd.sugar]: add the negation of other to self
        return self + (-other)
        # END SOLUTION

    def __rsub__(self, other):
        """Return ``other - self`` for a plain number on the left (``2 - a``)."""
        other = other if isinstance(other, Value) else Value(other)
        # BEGIN SOLUTION [micrograd.sugar]: add the negation of self to other
        return other + (-self)
        # END SOLUTION

    def __rmul__(self, other):
        """Return ``other * self`` for a plain number on the left (``2 * a``)."""
        other = other if isinstance(other, Value) else Value(other)
        # BEGIN SOLUTION [micrograd.sugar]: multiply other by self with the * of Values
        return other * self
        # END SOLUTION

    def __truediv__(self, other):
        """Return ``self / other``, as ``self`` times ``other`` to the power -1."""
        other = other if isinstance(other, Value) else Value(other)
        # BEGIN SOLUTION [micrograd.sugar]: multiply self by the reciprocal of other, made with **
        return self * other**-1
        # END SOLUTION

    def __rtruediv__(self, other):
        """Return ``other / self`` for a plain number on the left (``2 / a``)."""
        other = other if isinstance(other, Value) else Value(other)
        # BEGIN SOLUTION [micrograd.sugar]: multiply other by the reciprocal of self, made with **
        return other * self**-1
        # END SOLUTION

    # ------------------------------------------------------------------------- backpropagation

    def backward(self):
        """Fill in ``grad`` on this Value and on every Value it was computed from.

        Inside this method, define a function ``build_topo`` that walks the graph depth-first
        through ``_prev`` and appends a node only after all of its operands, keeping a set of
        the nodes already visited so each node is listed (and its closure later run) exactly
        once. Then set ``self.grad = 1`` and call ``_backward()`` on every node of that list in
        reverse order, this node first. Gradients already on the nodes are kept and added to.
        """
        # BEGIN SOLUTION [micrograd.backward]:
        #   list the graph in topological order with a nested depth-first build_topo and a
        #   visited set, seed this node's grad with 1, then run every node's _backward from
        #   the output back to the leaves
        order = []
        seen = set()

        def build_topo(node):
            if node in seen:
                return
            seen.add(node)
            for operand in node._prev:
                build_topo(operand)
            order.append(node)

        build_topo(self)
        self.grad = 1
        for node in reversed(order):
            node._backward()
        # END SOLUTION

    # ------------------------------------------- the lecture's own ops, written out
    # The lecture edition's tanh and exp (profile.yaml's editions): not tasks here, and not in
    # this reference's edition (it has relu, the repository's), so the audit has no region of
    # them; tests/engines/karpathy-micrograd/planted.yaml plants their bugs in the lecture
    # edition, and the reference answers for them as an oracle.

    def tanh(self):
        """Return tanh(self); its derivative, 1 - tanh(self)**2, needs only the output."""
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad

        out._backward = _backward
        return out

    def exp(self):
        """Return e**self, which is its own derivative."""
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad

        out._backward = _backward
        return out
