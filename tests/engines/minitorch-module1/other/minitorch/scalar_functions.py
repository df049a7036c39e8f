"""The functions, with other but equivalent derivative formulas than the reference's."""

import math

from . import operators
from .autodiff import Context


class ScalarFunction:
    @classmethod
    def _forward(cls, ctx, *inps):
        return cls.forward(ctx, *inps)

    @classmethod
    def _backward(cls, ctx, d_out):
        result = cls.backward(ctx, d_out)
        return tuple(result) if isinstance(result, tuple) else (result,)

    @classmethod
    def apply(cls, *vals):
        from .scalar import Scalar, ScalarHistory

        scalars = []
        for v in vals:
            scalars.append(v if isinstance(v, Scalar) else Scalar(v))
        ctx = Context()
        out = cls._forward(ctx, *[s.data for s in scalars])
        return Scalar(float(out), ScalarHistory(last_fn=cls, ctx=ctx, inputs=tuple(scalars)))


class Add(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, d_output):
        return (d_output,) * 2


class Log(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return math.log(a)

    @staticmethod
    def backward(ctx, d_output):
        return d_output / ctx.saved_tensors[0]


class Mul(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, d_output):
        a, b = ctx.saved_tensors
        return d_output * b, d_output * a


class Inv(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        r = 1.0 / a
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, d_output):
        # d(1/x)/dx = -(1/x)**2, from the saved output
        (r,) = ctx.saved_tensors
        return -d_output * r * r


class Neg(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        return operators.neg(a)

    @staticmethod
    def backward(ctx, d_output):
        return -d_output


class Sigmoid(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return operators.sigmoid(a)

    @staticmethod
    def backward(ctx, d_output):
        # sigmoid'(x) = e**-|x| / (1 + e**-|x|)**2 (an even function of x), from the input
        (a,) = ctx.saved_tensors
        z = math.exp(-abs(a))
        return d_output * z / ((1.0 + z) * (1.0 + z))


class ReLU(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a > 0)
        return operators.relu(a)

    @staticmethod
    def backward(ctx, d_output):
        (positive,) = ctx.saved_tensors
        return d_output if positive else 0.0


class Exp(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return math.exp(a)

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_tensors
        return math.exp(a) * d_output


class LT(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        return operators.lt(a, b)

    @staticmethod
    def backward(ctx, d_output):
        return (0.0,) * 2


class EQ(ScalarFunction):
    @staticmethod
    def forward(ctx, a, b):
        return operators.eq(a, b)

    @staticmethod
    def backward(ctx, d_output):
        return (0.0,) * 2
