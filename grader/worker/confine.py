"""What a worker does before any student code runs, and what a student's exception may say.

Both the probes' runner (``grader.worker.runner``) and the snippets' fresh interpreter
(``grader.worker.fresh``) start with it. It imports nothing of the grader's probes, nor numpy:
a fresh interpreter for a scalar engine's snippets starts without either.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from pathlib import Path
from typing import Any

BLOCKED_MODULES = ("torch", "reference", "grader.grading.suites", "grader.oracles", "hypothesis")
MAX_MESSAGE = 300
"""Characters of a student's exception message a worker sends back."""


class ImportBlocker(importlib.abc.MetaPathFinder):
    """Refuses modules a student engine must not reach (an oracle it could copy answers from).

    Without bubblewrap this is the only barrier, and student code can remove it: the security
    model (docs/security.md) says so. With bubblewrap the files are not even mounted.
    """

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if any(fullname == m or fullname.startswith(m + ".") for m in BLOCKED_MODULES):
            raise ImportError(f"{fullname} is not available while grading")
        return None


def confine_imports() -> Path:
    """Before any student code runs: block the modules it must not reach, drop hidden paths
    from ``sys.path`` and put the submission first, as when the student runs a file in its
    folder. Returns the submission's root."""
    root = Path(os.environ["GRADER_SUBMISSION"]).resolve()
    sys.meta_path.insert(0, ImportBlocker())
    hidden = [h for h in os.environ.get("GRADER_HIDDEN", "").split(os.pathsep) if h]
    sys.path[:] = [p for p in sys.path if p and not any(p.startswith(h) for h in hidden)]
    sys.path.insert(0, str(root))
    return root
