"""Module 0's float functions, each written another way than the reference's."""

import math


def mul(x, y):
    return float(x) * float(y)


def id(x):
    return float(x)


def add(x, y):
    return float(x) + float(y)


def neg(x):
    return -1.0 * x


def lt(x, y):
    return float(x < y)


def eq(x, y):
    return float(x == y)


def max(x, y):
    return y if y >= x else x


def is_close(x, y):
    return -1e-2 < x - y < 1e-2


def sigmoid(x):
    # 1 / (1 + e**-x) = exp(-log(1 + e**-x)); the exponent inside log1p is never positive
    if x < 0:
        return math.exp(x - math.log1p(math.exp(x)))
    return math.exp(-math.log1p(math.exp(-x)))


def relu(x):
    return (x + abs(x)) / 2.0


def log(x):
    return math.log(x)


def exp(x):
    return math.exp(x)


def inv(x):
    return x**-1.0


def log_back(x, d):
    return d * (1.0 / x)


def inv_back(x, d):
    return -(d * x**-2.0)


def relu_back(x, d):
    return 0.0 if x <= 0 else d
