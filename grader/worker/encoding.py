"""How the worker spells what an engine did: plain numbers only, or a ``ProbeError``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

Encoded = dict[str, Any]


class ProbeError(Exception):
    """The engine's answer cannot be reported (e.g. a value that is not a number)."""


def encode(value: Any, what: str) -> Encoded:
    """An engine value as ``{"shape", "data"}`` with non-finite numbers spelled as strings.

    Only numbers count: Python ints and floats (honest subclasses included), numpy numbers and
    numeric arrays, each converted to float64. A string that looks like a number, None, or an
    object that merely converts or compares like one is not a number.
    """
    try:
        array = None if isinstance(value, str | bytes) else np.asarray(value)
    except Exception:  # noqa: BLE001 - any failure to convert is the engine's
        array = None
    if array is None or array.dtype.kind not in "biuf":
        raise ProbeError(f"{what} is not a number: {type(value).__name__}")
    flat = [x if math.isfinite(x) else repr(x) for x in array.astype(np.float64).ravel().tolist()]
    return {"shape": list(array.shape), "data": flat}
