from baby.tensor import Tensor

__all__ = ["Tensor"]
