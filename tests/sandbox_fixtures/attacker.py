"""A fake runner for tests/sandbox/test_zygote.py: runs the code each request carries, as
student code would run.

Frames come and go through channel.py. A request ``{"code": source}`` runs ``source`` with
``reply`` (a dict) in its namespace and answers ``reply``; an exception it raises is answered
as its type and message.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # python -I leaves it out
import channel  # noqa: E402


def main():
    for message in channel.requests():
        namespace = {"reply": {}}
        try:
            exec(message["code"], namespace)  # noqa: S102 - the attack under test
        except Exception as exc:  # noqa: BLE001
            namespace["reply"]["raised"] = f"{type(exc).__name__}: {exc}"
        channel.reply(namespace["reply"])


if __name__ == "__main__":
    main()
