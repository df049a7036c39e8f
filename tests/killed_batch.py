"""A batch killed partway, at the point a test chooses, whatever the machine's speed.

Run as a script, it is ``python -m grader batch ...`` that kills its own process group (itself,
its lanes and their workers) with SIGKILL right after it stores its N-th ledger entry. Waiting
from outside for entries to appear and then killing raced the batch: on a loaded machine the
wait ran out first, or the batch stored more (or finished) before the kill landed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import IO, Any

from grader.batch.ledger import Ledger
from grader.workflows import cli


def run_killed(stores: int, arguments: list[str], stderr: IO[Any] | None = None) -> int:
    """Run ``grader batch`` with ``arguments``, killed once it has stored ``stores`` entries
    (in a session of its own); its return code, ``-SIGKILL`` where the kill landed."""
    return subprocess.run(
        [sys.executable, "-I", __file__, str(stores), *arguments],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=stderr if stderr is not None else subprocess.DEVNULL,
        check=False,
    ).returncode


def _main() -> int:
    stores, arguments = int(sys.argv[1]), sys.argv[2:]
    put, stored = Ledger.put, []

    def put_then_die(ledger: Ledger, key: Any, entry: dict[str, Any]) -> None:
        put(ledger, key, entry)
        stored.append(key)
        if len(stored) == stores:
            os.killpg(0, signal.SIGKILL)

    Ledger.put = put_then_die
    return cli.main(["batch", *arguments])


if __name__ == "__main__":
    sys.exit(_main())
