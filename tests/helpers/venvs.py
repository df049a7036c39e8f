"""A throwaway venv in which ``grader`` is imported from a given folder (a release, an unzipped
Gradescope source, a copy of the working tree), with every other package borrowed from the
project's venv: proves that the folder's own grader works, without installing anything. With
what a release's own run starts from (``BASE_PYTHON``, ``environment``) and the check of its
GitHub workflow."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from grader.sandbox.sandbox import bwrap_status
from tests.helpers import REPO_ROOT

BWRAP_OK = bwrap_status()[0]
_ANYWHERE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
)
_AT_THE_TOP = {"dist", "build", "audit", "site"}


def NOT_COPIED(directory: str, names: list[str]) -> set[str]:  # noqa: N802 - copytree's ignore=
    """What a copy of the working tree leaves out, so it is as a fresh clone: history, the venv
    and test runs' caches anywhere, and the folders builds, audits and docs builds leave at the
    top (``grader/audit/`` and ``tests/audit/`` are code)."""
    top = set(names) & _AT_THE_TOP if Path(directory).resolve() == REPO_ROOT.resolve() else set()
    return set(_ANYWHERE(directory, names)) | top


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


BASE_PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
"""The Python the project's venv was made from, as a fresh clone's make would find it."""
OUTER = ("MAKE", "MFLAGS", "PYTEST_", "PYTHON", "VIRTUAL_ENV")
"""Variables (by prefix) of the project's own run (``make test``, pytest-xdist, an activated
venv) that must not reach the release's."""


def environment() -> dict[str, str]:
    """This process's environment without ``OUTER``: what a release's own run starts from."""
    return {k: v for k, v in os.environ.items() if not k.startswith(OUTER)}


def assert_valid_workflow(path: Path) -> None:
    """``path`` is a GitHub Actions workflow by GitHub's own schema (vendored by
    check-jsonschema, so this needs no network)."""
    pytest.importorskip("check_jsonschema", reason="check-jsonschema is in the dev extra")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
