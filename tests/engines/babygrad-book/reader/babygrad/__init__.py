from babygrad.tensor import Tensor

__all__ = ["Tensor"]
