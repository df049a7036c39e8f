"""The optional programs (and PyTorch) some tests need, found the way the grader finds them.

A student's laptop, a fresh CI image or an instructor's machine often lacks Graphviz, Chromium,
bubblewrap, PyTorch or mkdocs, and ``make test`` must still pass there. A test that needs one skips
with a reason in one format, naming it and how to install it, so ``tests/conftest.py`` can say
in one line at the end of the run what did not run for want of what. What can be checked
without it (the text drawing, the fallback sandbox, finite differences alone) is checked by
other tests.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from grader.oracles import torch_oracle
from grader.report import drawing as pictures
from grader.sandbox.sandbox import bwrap_status

INSTALL = {
    "bwrap": "apt-get install bubblewrap",
    "dot": "apt-get install graphviz",
    "chromium": "apt-get install chromium",
    # the Makefile's pin; from PyPI on Linux that is a CUDA build of several GB
    "torch": "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
    "mkdocs": "pip install -e '.[docs]'",  # the docs extra, which make installs
}
"""Each optional dependency and how to install it."""
REASON = re.compile(r"needs (\S+) \(([^()]+)\): ")


def reason(needed: str, why: str) -> str:
    """The skip reason for a test that needs ``needed``: REASON matches it."""
    return f"needs {needed} ({INSTALL[needed]}): {why}"


BWRAP_OK, BWRAP_WHY = bwrap_status()  # not on PATH: the grader looks in fixed system folders
DOT = pictures.dot_program()
CHROMIUM = shutil.which("chromium")

needs_bwrap = pytest.mark.skipif(not BWRAP_OK, reason=reason("bwrap", BWRAP_WHY))
needs_dot = pytest.mark.skipif(DOT is None, reason=reason("dot", "Graphviz is not installed"))
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason=reason("chromium", "Chromium is not installed")
)
SANDBOX_MODES = [pytest.param("bwrap", marks=needs_bwrap), "none"]
"""A test of confinement runs with bubblewrap where it works, and always with the fallback."""
needs_mkdocs = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason=reason("mkdocs", "the documentation site cannot be built"),
)
TORCH_WHY = reason("torch", "PyTorch is not installed")
needs_torch = pytest.mark.skipif(not torch_oracle.available(), reason=TORCH_WHY)


def torch() -> ModuleType:
    """PyTorch, imported for a test that compares with it, or a skip the closing line counts."""
    return pytest.importorskip("torch", reason=TORCH_WHY)


def screenshot(page: Path, window: tuple[int, int]) -> np.ndarray:
    """``page`` as headless Chromium paints it in a window of ``window`` (width, height)
    pixels, as RGB rows; ``GRADER_SCREENSHOT=path`` keeps the PNG (the README's pictures)."""
    image_module = pytest.importorskip("PIL.Image")
    shot = page.with_suffix(".png")
    subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={page.parent / 'chromium-profile'}",
            f"--screenshot={shot}",
            f"--window-size={window[0]},{window[1]}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    with image_module.open(shot) as png:
        assert png.size == window
        image = np.asarray(png.convert("RGB"))
    if target := os.environ.get("GRADER_SCREENSHOT"):
        shutil.copyfile(shot, Path(target))
    return image


def painted(image: np.ndarray, colour: str) -> np.ndarray:
    """Where a screenshot has exactly ``colour`` (``#rrggbb``): the pages paint what a test
    looks for in colours used nowhere else."""
    return np.all(image == [int(colour[i : i + 2], 16) for i in (1, 3, 5)], axis=2)
