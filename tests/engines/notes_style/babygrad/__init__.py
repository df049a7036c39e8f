from .tensor import Tensor

__all__ = ["Tensor"]
