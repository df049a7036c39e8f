"""Shared pytest fixtures."""

import importlib
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def _import_isolated(root, name):
    """Import module ``name`` (e.g. "micrograd.engine") from directory ``root``, leaving no trace.

    reference/ and exercises/ both hold packages called ``micrograd`` and ``babygrad``. This
    puts ``root`` first on sys.path, hides any already-imported copy of the top-level package,
    imports, then removes what it imported from sys.modules and restores what it hid. The
    returned module keeps working: its functions hold their own globals.
    """
    top = name.split(".")[0]

    def owned(key):
        return key == top or key.startswith(top + ".")

    hidden = {key: mod for key, mod in sys.modules.items() if owned(key)}
    for key in hidden:
        del sys.modules[key]
    path = str(Path(root).resolve())
    sys.path.insert(0, path)
    try:
        importlib.invalidate_caches()
        return importlib.import_module(name)
    finally:
        sys.path.remove(path)
        for key in [key for key in sys.modules if owned(key)]:
            del sys.modules[key]
        sys.modules.update(hidden)


@pytest.fixture(scope="session")
def import_isolated():
    """``import_isolated(root, "pkg.module")``: import from ``root``, leaving sys.modules as is."""
    return _import_isolated
