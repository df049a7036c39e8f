"""Module 0's float functions that 2020's scalar.py calls (its students copy them in)."""

import math

EPS = 1e-6


def id(x):
    return x


def add(x, y):
    return x + y


def neg(x):
    return -x


def mul(x, y):
    return x * y


def lt(x, y):
    return float(x < y)


def sigmoid(x):
    if x < 0:
        e = math.exp(x)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(-x))


def relu(x):
    return x if x > 0 else 0.0


def relu_back(x, d):
    return d * (x > 0)


def log(x):
    return math.log(x + EPS)


def log_back(x, d):
    return d / (x + EPS)


def exp(x):
    return math.exp(x)


def inv(x):
    return 1.0 / x


def inv_back(x, d):
    return -d / x**2
