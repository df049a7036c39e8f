"""babygrad, as the book builds it: ``from babygrad import Tensor``."""

from .tensor import Tensor

__all__ = ["Tensor"]
