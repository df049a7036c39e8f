"""MiniTorch, Module 1: scalar automatic differentiation."""

from . import operators
from .autodiff import (
    Context,
    Variable,
    backpropagate,
    central_difference,
    topological_sort,
)
from .scalar import Scalar, ScalarHistory
from .scalar_functions import (
    EQ,
    LT,
    Add,
    Exp,
    Inv,
    Log,
    Mul,
    Neg,
    ReLU,
    ScalarFunction,
    Sigmoid,
)

__all__ = [
    "EQ",
    "LT",
    "Add",
    "Context",
    "Exp",
    "Inv",
    "Log",
    "Mul",
    "Neg",
    "ReLU",
    "Scalar",
    "ScalarFunction",
    "ScalarHistory",
    "Sigmoid",
    "Variable",
    "backpropagate",
    "central_difference",
    "operators",
    "topological_sort",
]
