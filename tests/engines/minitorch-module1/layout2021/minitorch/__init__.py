"""MiniTorch's 2021 Module 1 layout: the ScalarFunctions and central_difference in scalar.py,
the chain rule a History's backprop_step."""

from .autodiff import *  # noqa: F403
from .scalar import *  # noqa: F403
