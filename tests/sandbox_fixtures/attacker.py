"""A fake runner for tests/sandbox/test_zygote.py: runs the code each request carries, as
student code would run.

Frames come in on fd 3 and go out on fd 4 through grader/sandbox/framing.py, loaded by path as
chaos.py does. A request ``{"code": source}`` runs ``source`` with ``reply`` (a dict) in its
namespace and answers ``reply``; an exception it raises is answered as its type and message.
"""

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


def main():
    while True:
        try:
            message = framing.read_frame(3)
        except framing.FrameError:
            sys.exit(0)
        namespace = {"reply": {}}
        try:
            exec(message["code"], namespace)  # noqa: S102 - the attack under test
        except Exception as exc:  # noqa: BLE001
            namespace["reply"]["raised"] = f"{type(exc).__name__}: {exc}"
        framing.write_frame(4, namespace["reply"])


if __name__ == "__main__":
    main()
