"""A second correct needle (homework 1), in the 2022 layout: one ops.py module, devices in
autograd.py. Written independently of the reference, with other formulations throughout."""

from . import ops  # noqa: F401
from .autograd import Tensor, all_devices, cpu  # noqa: F401
from .ops import *  # noqa: F401,F403
