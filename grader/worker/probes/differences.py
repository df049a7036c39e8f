"""The probe of ``grader.checks.differences``: the course's ``central_difference`` on one of
the grader's functions (``grader.language.differences``)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from grader.language.differences import CURVES
from grader.language.package import resolve
from grader.worker.encoding import encode
from grader.worker.probes.build import functions_of


def probe_central_difference(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """``central_difference(f, *values, arg=..., epsilon=...)``; ``arg`` left to its default
    where the case says so (it is 0 there)."""
    api = functions_of(engine)
    difference = resolve(engine.package, api.central_difference)
    keywords: dict[str, Any] = {"epsilon": case["epsilon"]}
    if not case.get("default_arg"):
        keywords["arg"] = case["arg"]
    value = difference(CURVES[case["curve"]], *case["values"], **keywords)
    return {"value": encode(value, "the difference")}
