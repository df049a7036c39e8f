"""The simplest runner: read a frame on fd 3, write it back on fd 4, until the channel closes."""

import importlib.util
import os
import sys

_FRAMING = os.path.normpath(
    os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "grader", "sandbox", "framing.py"
    )
)
_spec = importlib.util.spec_from_file_location("_framing", _FRAMING)
framing = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(framing)

while True:
    try:
        message = framing.read_frame(3)
    except framing.FrameError:
        sys.exit(0)
    framing.write_frame(4, message)
