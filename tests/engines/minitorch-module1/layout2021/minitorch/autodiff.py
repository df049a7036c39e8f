"""2021's autodiff: a Variable's History holds the function that made it, its Context and
its inputs; History.backprop_step asks FunctionBase.chain_rule for the inputs' shares."""

__all__ = [
    "Context",
    "FunctionBase",
    "History",
    "Variable",
    "backpropagate",
    "is_constant",
    "topological_sort",
]

_made = 0


class Variable:
    def __init__(self, history, name=None):
        global _made
        _made += 1
        self.history = history
        self._derivative = None
        self.unique_id = f"v{_made}"
        self.name = name or self.unique_id
        self.used = 0

    def requires_grad_(self, val):
        self.history = History() if val else None

    def backward(self, d_output=None):
        backpropagate(self, 1.0 if d_output is None else d_output)

    @property
    def derivative(self):
        return self._derivative

    def is_leaf(self):
        return self.history.last_fn is None

    def accumulate_derivative(self, val):
        assert self.is_leaf(), "Only leaf variables can have derivatives."
        self._derivative = val if self._derivative is None else self._derivative + val

    def zero_grad_(self):
        self._derivative = self.zeros()

    def expand(self, x):
        return x

    def __radd__(self, b):
        return self + b

    def __rmul__(self, b):
        return self * b

    def zeros(self):
        return 0.0


class Context:
    def __init__(self, no_grad=False):
        self._saved = None
        self.no_grad = no_grad

    def save_for_backward(self, *values):
        if not self.no_grad:
            self._saved = values

    @property
    def saved_values(self):
        assert self._saved is not None, "Did you forget to save values?"
        return self._saved[0] if len(self._saved) == 1 else self._saved


class History:
    def __init__(self, last_fn=None, ctx=None, inputs=None):
        self.last_fn = last_fn
        self.ctx = ctx
        self.inputs = inputs

    def backprop_step(self, d_output):
        return self.last_fn.chain_rule(self.ctx, self.inputs, d_output)


class FunctionBase:
    @staticmethod
    def variable(raw, history):
        raise NotImplementedError

    @classmethod
    def apply(cls, *vals):
        tracked = any(isinstance(v, Variable) and v.history is not None for v in vals)
        for v in vals:
            if isinstance(v, Variable):
                v.used += 1
        ctx = Context(not tracked)
        raw = [v.get_data() if isinstance(v, Variable) else v for v in vals]
        out = cls.forward(ctx, *raw)
        return cls.variable(cls.data(out), History(cls, ctx, vals) if tracked else None)

    @classmethod
    def chain_rule(cls, ctx, inputs, d_output):
        shares = cls.backward(ctx, d_output)
        shares = shares if isinstance(shares, tuple) else (shares,)
        return [(x, d) for x, d in zip(inputs, shares, strict=True) if not is_constant(x)]


def is_constant(val):
    return not isinstance(val, Variable) or val.history is None


def topological_sort(variable):
    """Every non-constant variable once, the output first, each before its inputs."""
    seen, finished = set(), []
    stack = [(variable, False)]
    while stack:
        node, done = stack.pop()
        if done:
            finished.append(node)
            continue
        if node.unique_id in seen or is_constant(node):
            continue
        seen.add(node.unique_id)
        stack.append((node, True))
        if not node.is_leaf():
            stack.extend((x, False) for x in node.history.inputs if not is_constant(x))
    return finished[::-1]


def backpropagate(variable, deriv):
    gathered = {variable.unique_id: deriv}
    for node in topological_sort(variable):
        d = gathered.pop(node.unique_id, None)
        if d is None:
            continue
        if node.is_leaf():
            node.accumulate_derivative(d)
            continue
        for x, share in node.history.backprop_step(d):
            gathered[x.unique_id] = gathered.get(x.unique_id, 0.0) + share
