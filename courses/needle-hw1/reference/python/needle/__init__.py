"""needle: a small deep-learning library built in CMU 10-414/714 (homework 1: autograd)."""

from . import ops  # noqa: F401
from .autograd import Op, Tensor, TensorOp, Value  # noqa: F401
from .backend_numpy import Device, all_devices, cpu  # noqa: F401
from .ops import *  # noqa: F401,F403  (every op function: add, matmul, summation, ...)
