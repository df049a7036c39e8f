"""A throwaway venv in which ``grader`` is imported from a given folder (a release, an unzipped
Gradescope source, a copy of the working tree), with every other package borrowed from the
project's venv: proves that the folder's own grader works, without installing anything."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from grader.worker.sandbox import bwrap_status

BWRAP_OK = bwrap_status()[0]
NOT_COPIED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "dist",
    "build",
    "audit",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    "site",
)
"""What a copy of the working tree leaves out, so it is as a fresh clone: history, the venv,
and what builds, audits, docs builds and test runs leave behind."""


def overlay_venv(where: Path, first: Path) -> Path:
    """Create the venv at ``where`` with ``first`` ahead of everything; its python."""
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "overlay.pth").write_text(f"{first}\nimport site; site.addsitedir({ours!r})\n")
    (where / ".installed").touch()
    return python


def assert_confined(protections: list[str]) -> None:
    """A grade made in another environment (an overlay venv, a release's, a Gradescope image)
    ran its workers under bubblewrap wherever bubblewrap works here: a test that grades there
    must not pass while the sandbox silently fell back."""
    if BWRAP_OK:
        assert protections and protections[0].startswith("bubblewrap"), protections


def assert_not_unconfined(output: str) -> None:
    """The same for a command's terminal output: the report names a missing sandbox."""
    if BWRAP_OK:
        assert "NO sandbox" not in output, output[-3000:]
