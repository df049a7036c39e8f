"""2020's autodiff: a chain rule answers VariableWithDeriv holders, constants left out, and
backpropagate runs the course's breadth-first queue from one of them, adding what a variable
still waiting in the queue is handed again to its entry (checked by name)."""

from collections import deque
from itertools import count

__all__ = [
    "Context",
    "FunctionBase",
    "History",
    "Variable",
    "VariableWithDeriv",
    "backpropagate",
    "is_constant",
    "is_leaf",
]

_names = count()


class Variable:
    def __init__(self, history, name=None):
        self.history = history
        self._derivative = None
        self.name = name if name is not None else f"var{next(_names)}"

    def requires_grad_(self, val):
        self.history = History() if val else None

    def backward(self, d_output=None):
        backpropagate(VariableWithDeriv(self, 1.0 if d_output is None else d_output))

    @property
    def derivative(self):
        return self._derivative

    def __hash__(self):
        return hash(self.name)

    def _add_deriv(self, val):
        assert self.history.is_leaf(), "Only leaf variables can have derivatives."
        self._derivative = (
            self.zeros() + val if self._derivative is None else self._derivative + val
        )

    def zero_grad_(self):
        self._derivative = self.zeros()

    def __radd__(self, b):
        return self + b

    def __rmul__(self, b):
        return self * b

    def zeros(self):
        return 0.0

    def expand(self, x):
        return x


class Context:
    def __init__(self, no_grad=False):
        self.no_grad = no_grad
        self._kept = None

    def save_for_backward(self, *values):
        if not self.no_grad:
            self._kept = values

    @property
    def saved_values(self):
        assert not self.no_grad, "Doesn't require grad"
        assert self._kept is not None, "Did you forget to save values?"
        return self._kept[0] if len(self._kept) == 1 else self._kept


class History:
    def __init__(self, last_fn=None, ctx=None, inputs=None):
        self.last_fn, self.ctx, self.inputs = last_fn, ctx, inputs

    def is_leaf(self):
        return self.last_fn is None

    def backprop_step(self, d_output):
        return self.last_fn.chain_rule(self.ctx, self.inputs, d_output)


class VariableWithDeriv:
    def __init__(self, variable, deriv):
        self.variable = variable
        self.deriv = variable.expand(deriv)


class FunctionBase:
    @staticmethod
    def variable(raw, history):
        raise NotImplementedError

    @classmethod
    def apply(cls, *vals):
        tracked = [isinstance(v, Variable) and v.history is not None for v in vals]
        ctx = Context(no_grad=not any(tracked))
        raw = [v.get_data() if isinstance(v, Variable) else v for v in vals]
        out = cls.forward(ctx, *raw)
        assert isinstance(out, cls.data_type), f"Expected {cls.data_type}, got {type(out)}"
        history = History(cls, ctx, vals) if any(tracked) else None
        return cls.variable(cls.data(out), history)

    @classmethod
    def chain_rule(cls, ctx, inputs, d_output):
        """Each non-constant input with its share of d_output, as VariableWithDeriv."""
        shares = cls.backward(ctx, 1.0 if d_output is None else d_output)
        if not isinstance(shares, tuple):
            shares = (shares,)
        return [
            VariableWithDeriv(x, share)
            for x, share in zip(inputs, shares, strict=True)
            if not is_constant(x)
        ]


def is_leaf(val):
    return isinstance(val, Variable) and val.history.is_leaf()


def is_constant(val):
    return not isinstance(val, Variable) or val.history is None


def backpropagate(final_variable_with_deriv):
    """The course's breadth-first walk: a queue of variables with derivatives, a leaf's
    added to it, any other's handed to its chain rule, whose answers join the queue or add
    to an entry of the same name still waiting in it."""
    queue = deque([final_variable_with_deriv])
    waiting = {final_variable_with_deriv.variable.name: final_variable_with_deriv}
    while queue:
        current = queue.popleft()
        waiting.pop(current.variable.name, None)
        if is_leaf(current.variable):
            current.variable._add_deriv(current.deriv)
            continue
        for found in current.variable.history.backprop_step(current.deriv):
            entry = waiting.get(found.variable.name)
            if entry is None:
                waiting[found.variable.name] = found
                queue.append(found)
            else:
                entry.deriv = entry.deriv + found.deriv
