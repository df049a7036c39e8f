"""2020's scalar.py: central_difference, Scalar (no __rtruediv__ nor __eq__: its starter has
neither) and the ScalarFunctions, LT among them (2020 has no EQ)."""

from . import operators
from .autodiff import FunctionBase, History, Variable

__all__ = [
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
    def moved(step):
        return f(*(v + step if i == arg else v for i, v in enumerate(vals)))

    return (moved(epsilon) - moved(-epsilon)) / (2 * epsilon)


class Scalar(Variable):
    def __init__(self, v, back=None, name=None):
        super().__init__(back if back is not None else History(), name=name)
        self.data = float(v)

    def __repr__(self):
        return f"Scalar({self.data:f})"

    def get_data(self):
        return self.data

    def __add__(self, b):
        return Add.apply(self, b)

    def __sub__(self, b):
        return Add.apply(self, -b)

    def __mul__(self, b):
        return Mul.apply(self, b)

    def __truediv__(self, b):
        return Mul.apply(self, Inv.apply(b))

    def __neg__(self):
        return Neg.apply(self)

    def __lt__(self, b):
        return LT.apply(self, b)

    def __gt__(self, b):
        return LT.apply(b, self)

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
        return a


class Add(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, d_output):
        return d_output, d_output


class Log(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return operators.log(a)

    @staticmethod
    def backward(ctx, d_output):
        return operators.log_back(ctx.saved_values, d_output)


class LT(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        return operators.lt(a, b)

    @staticmethod
    def backward(ctx, d_output):
        return 0.0, 0.0


class Mul(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return operators.mul(a, b)

    @staticmethod
    def backward(ctx, d_output):
        a, b = ctx.saved_values
        return d_output * b, d_output * a


class Inv(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return operators.inv(a)

    @staticmethod
    def backward(ctx, d_output):
        return operators.inv_back(ctx.saved_values, d_output)


class Neg(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        return operators.neg(a)

    @staticmethod
    def backward(ctx, d_output):
        return operators.neg(d_output)


class Sigmoid(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        out = operators.sigmoid(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, d_output):
        s = ctx.saved_values
        return d_output * s * (1.0 - s)


class ReLU(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return operators.relu(a)

    @staticmethod
    def backward(ctx, d_output):
        return operators.relu_back(ctx.saved_values, d_output)


class Exp(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        out = operators.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, d_output):
        return d_output * ctx.saved_values


def derivative_check(f, *scalars):
    """The 2020 starter's check, in its terms: backward's derivatives against
    central_difference's, to 1e-2."""
    for x in scalars:
        x.requires_grad_(True)
    f(*scalars).backward()
    for i, x in enumerate(scalars):
        check = central_difference(f, *scalars, arg=i)
        assert abs(x.derivative - check.data) <= 1e-2 * (1 + abs(check.data)), (i, x.derivative)
