"""The array backend of homework 1: plain numpy on the CPU.

Later homeworks swap in needle's own NDArray; here every Tensor holds a ``numpy.ndarray`` and
every op's ``compute`` uses ``array_api``, which is simply numpy.
"""

import numpy
import numpy as array_api  # noqa: F401  (re-exported: the ops compute with it)

NDArray = numpy.ndarray


class Device:
    """Where a Tensor's data lives."""


class CPUDevice(Device):
    """The only device of homework 1: data in numpy arrays in main memory."""

    def __repr__(self):
        return "needle.cpu()"

    def __hash__(self):
        return hash(repr(self))

    def __eq__(self, other):
        return isinstance(other, CPUDevice)

    def enabled(self):
        return True


def cpu():
    """The CPU device."""
    return CPUDevice()


def default_device():
    return cpu()


def all_devices():
    """Every device this backend offers."""
    return [cpu()]
