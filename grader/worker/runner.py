"""The worker's main loop: import the submission, answer probe requests with plain numbers.

Runs inside the sandbox (``python -I -m grader.worker.runner``). Requests and answers travel on
``framing``'s two file descriptors, never on stdout/stderr. Nothing here decides a grade: the
trusted parent validates and judges every answer.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np  # noqa: F401 - imported before the submission can shadow it

from grader.language import adapters
from grader.language.function_api import FunctionApi
from grader.language.tensor_api import BABYGRAD_API, TensorApi
from grader.sandbox import framing
from grader.worker import engines, probes
from grader.worker.confine import MAX_MESSAGE, confine_imports
from grader.worker.deviations import deviation
from grader.worker.encoding import ProbeError
from grader.worker.protocol import Probe

MICROGRAD_ENGINE = "micrograd/engine.py"


def student_frames(tb: Any, root: Path) -> list[str]:
    """The traceback lines that are in the student's own files, oldest first."""
    lines = []
    for frame in traceback.extract_tb(tb):
        try:
            relative = Path(frame.filename).resolve().relative_to(root)
        except ValueError:
            continue
        line = f"{relative}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()}"
        if not lines or lines[-1] != line:  # a deep recursion repeats one frame
            lines.append(line)
    return lines[-5:]


def raised_in(exc: BaseException) -> str:
    """The function that raised ``exc`` (``Autograd.backward``): what a bare
    ``NotImplementedError()`` leaves unsaid."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return "" if tb is None else tb.tb_frame.f_code.co_qualname


def describe(exc: BaseException, root: Path) -> dict[str, Any]:
    """A bounded, plain description of an exception raised while probing the engine."""
    frames = student_frames(exc.__traceback__, root)
    message = f"{type(exc).__name__}: {exc}"[:MAX_MESSAGE]
    if isinstance(exc, NotImplementedError):
        status, message = "missing", f"not implemented: {str(exc) or raised_in(exc)}"[:MAX_MESSAGE]
    elif isinstance(exc, AttributeError) and not frames and getattr(exc, "name", None):
        status, message = "missing", deviation(exc) or f"not implemented: {exc.name}"
    elif isinstance(exc, ProbeError):
        status = "invalid"
    else:
        status = "error"
    return {"status": status, "message": message, "frames": frames}


class Submission:
    """Imports each assignment of the submission once, remembering a failure to import."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.loaded: dict[str, ModuleType | SimpleNamespace | BaseException] = {}

    def engine(
        self, assignment: str, api: dict[str, Any] | None = None
    ) -> ModuleType | SimpleNamespace:
        """The assignment's engine, imported the first time it is asked for (by the import
        request, which carries a tensor course's API when it is not babygrad's)."""
        if assignment not in self.loaded:
            self.loaded[assignment] = self._load(assignment, api)
        engine = self.loaded[assignment]
        if isinstance(engine, BaseException):
            raise engine
        return engine

    def _load(
        self, assignment: str, api: dict[str, Any] | None
    ) -> ModuleType | SimpleNamespace | BaseException:
        spelling = spelling_of(api)
        # A package is its API's, whatever the assignment is called (the babygrad book's
        # reader may name hers otherwise than the book).
        name = MICROGRAD_ENGINE if assignment == "micrograd" else spelling.engine_file
        engine = self.root / name
        if not engine.is_file():
            return FileNotFoundError(f"the submission has no {name}")
        # As when the student runs the file in its folder: a module beside it imports by name
        # (``from utils import RNG``). The folder is in the scratch copy, nothing more is read.
        sys.path.insert(1, str(engine.parent))
        if spelling.folder:
            sys.path.insert(1, str(self.root / spelling.folder))
        try:
            loaded = self._import(assignment, spelling)
        except BaseException as exc:  # noqa: BLE001 - SystemExit at import is the student's
            top = self.root / spelling.folder / spelling.package
            if spelling.init or not (top / "__init__.py").is_file():
                return exc
            # A package the course says has no top __init__ (TinyTorch's tinytorch/) whose
            # upload holds the course's own, which failed (TinyTorch's imports every module of
            # the course, unexported ones too): imported as the namespace package the course
            # describes, its top __init__ not run. The failure stands if this fails as well.
            forget(spelling.package)
            namespace = ModuleType(spelling.package)
            namespace.__path__ = [str(top)]
            sys.modules[spelling.package] = namespace
            try:
                loaded = self._import(assignment, spelling)
            except BaseException:  # noqa: BLE001
                forget(spelling.package)
                return exc
        if isinstance(loaded, SimpleNamespace):
            loaded.api = spelling
        return loaded

    @staticmethod
    def _import(assignment: str, spelling: TensorApi | FunctionApi) -> ModuleType | SimpleNamespace:
        if isinstance(spelling, TensorApi) and spelling.adapter_source:
            adapter = adapters.load_adapter(spelling.adapter_source, assignment, spelling.snippets)
            return SimpleNamespace(adapter=adapter, engine=adapter.load())
        whole = isinstance(spelling, FunctionApi)
        paths = (spelling.ops_path, spelling.tensor_path) if not whole else ("", "")
        return engines.import_engine(assignment, spelling.package, whole, *paths)


def forget(package: str) -> None:
    """Drop a package and its modules from ``sys.modules`` (a failed import's leftovers)."""
    for name in engines.owned(package):
        del sys.modules[name]


def spelling_of(api: dict[str, Any] | None) -> TensorApi | FunctionApi:
    """The API an import request carries (babygrad's when it carries none)."""
    if not api:
        return BABYGRAD_API
    return (
        FunctionApi.from_json(api) if api.get("model") == "function" else TensorApi.from_json(api)
    )


def answer(submission: Submission, request: dict[str, Any]) -> dict[str, Any]:
    results = []
    load = request["probe"] == Probe.LOAD and request["cases"]
    try:
        engine = submission.engine(
            request["assignment"], request["cases"][0].get("api") if load else None
        )
    except BaseException as exc:  # noqa: BLE001
        error = describe(exc, submission.root)
        if isinstance(exc, FileNotFoundError):
            error["status"] = "missing"
        return {"id": request["id"], "results": [{"error": error}] * len(request["cases"])}
    probe = probes.PROBES.get(request["probe"])
    for case in request["cases"]:
        try:
            if probe is None:
                raise ProbeError(f"unknown probe {request['probe']!r}")
            results.append({"ok": probe(engine, case)})
        except BaseException as exc:  # noqa: BLE001 - SystemExit, RecursionError, all of it
            results.append({"error": describe(exc, submission.root)})
    return {"id": request["id"], "results": results}


def main() -> None:
    submission = Submission(confine_imports())
    while True:
        try:
            request = framing.read_frame(framing.REQUEST_FD)
        except framing.FrameError:
            return
        framing.write_frame(framing.REPLY_FD, answer(submission, request))


if __name__ == "__main__":
    main()
