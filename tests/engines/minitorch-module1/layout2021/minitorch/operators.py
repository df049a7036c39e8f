"""Module 0's float functions, as 2021's scalar.py calls them."""

import math

EPS = 1e-6


def id(x):
    return x


def add(x, y):
    return x + y


def mul(x, y):
    return x * y


def is_close(x, y):
    return abs(x - y) < 1e-2


def lt(x, y):
    return 1.0 if x < y else 0.0


def eq(x, y):
    return 1.0 if x == y else 0.0


def sigmoid(x):
    z = math.exp(-abs(x))
    return 1.0 / (1.0 + z) if x >= 0 else z / (1.0 + z)


def relu(x):
    return max(x, 0.0)


def relu_back(x, d):
    return d if x > 0 else 0.0


def log(x):
    return math.log(x + EPS)


def log_back(x, d):
    return d / (x + EPS)


def inv(x):
    return 1.0 / x


def inv_back(x, d):
    return -d / (x * x)


def exp(x):
    return math.exp(x)


def sum(ls):
    total = 0.0
    for x in ls:
        total += x
    return total
