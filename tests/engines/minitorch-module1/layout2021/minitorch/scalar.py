"""2021's scalar.py: central_difference, Scalar and every ScalarFunction."""

from . import operators
from .autodiff import FunctionBase, History, Variable

__all__ = [
    "EQ",
    "LT",
    "Add",
    "Exp",
    "Inv",
    "Log",
    "Mul",
    "Neg",
    "ReLU",
    "Scalar",
    "ScalarFunction",
    "Sigmoid",
    "central_difference",
    "derivative_check",
]


def central_difference(f, *vals, arg=0, epsilon=1e-6):
    up = [v + epsilon if i == arg else v for i, v in enumerate(vals)]
    down = [v - epsilon if i == arg else v for i, v in enumerate(vals)]
    return (f(*up) - f(*down)) / (2.0 * epsilon)


class Scalar(Variable):
    def __init__(self, v, back=None, name=None):
        super().__init__(History() if back is None else back, name=name)
        self.data = float(v)

    def __repr__(self):
        return f"Scalar({self.data})"

    def get_data(self):
        return self.data

    def __bool__(self):
        return bool(self.data)

    def __add__(self, b):
        return Add.apply(self, b)

    def __sub__(self, b):
        return Add.apply(self, Neg.apply(b))

    def __mul__(self, b):
        return Mul.apply(self, b)

    def __truediv__(self, b):
        return Mul.apply(self, Inv.apply(b))

    def __rtruediv__(self, b):
        return Mul.apply(b, Inv.apply(self))

    def __neg__(self):
        return Neg.apply(self)

    def __lt__(self, b):
        return LT.apply(self, b)

    def __gt__(self, b):
        return LT.apply(b, self)

    def __eq__(self, b):
        return EQ.apply(self, b)

    __hash__ = Variable.__hash__

    def log(self):
        return Log.apply(self)

    def exp(self):
        return Exp.apply(self)

    def sigmoid(self):
        return Sigmoid.apply(self)

    def relu(self):
        return ReLU.apply(self)


class ScalarFunction(FunctionBase):
    variable = Scalar
    data_type = float

    @staticmethod
    def data(a):
        return float(a)


class Add(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, d_output):
        return d_output, d_output


class Mul(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, d_output):
        a, b = ctx.saved_values
        return b * d_output, a * d_output


class Neg(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, d_output):
        return -d_output


class Inv(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return operators.inv(a)

    @staticmethod
    def backward(ctx, d_output):
        return operators.inv_back(ctx.saved_values, d_output)


class Log(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return operators.log(a)

    @staticmethod
    def backward(ctx, d_output):
        return operators.log_back(ctx.saved_values, d_output)


class Exp(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        out = operators.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, d_output):
        return ctx.saved_values * d_output


class Sigmoid(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        s = operators.sigmoid(a)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, d_output):
        s = ctx.saved_values
        return s * (1.0 - s) * d_output


class ReLU(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return operators.relu(a)

    @staticmethod
    def backward(ctx, d_output):
        return operators.relu_back(ctx.saved_values, d_output)


class LT(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        return operators.lt(a, b)

    @staticmethod
    def backward(ctx, d_output):
        return 0.0, 0.0


class EQ(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        return operators.eq(a, b)

    @staticmethod
    def backward(ctx, d_output):
        return 0.0, 0.0


def derivative_check(f, *scalars):
    """The starter's check, in its words: autodiff's derivatives against central_difference."""
    for x in scalars:
        x.requires_grad_(True)
    f(*scalars).backward()
    for i, x in enumerate(scalars):
        expected = central_difference(f, *scalars, arg=i)
        got = 0.0 if x.derivative is None else x.derivative
        assert abs(got - expected.data) <= 1e-2 + 1e-2 * abs(expected.data), (i, got, expected)
