"""babygrad: a small tensor autograd library built on numpy."""

from .tensor import Tensor

__all__ = ["Tensor"]
