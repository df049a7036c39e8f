"""``rubric.yaml``: what is graded, for how many points; validated against a JSON Schema.

A bad rubric is an error that names the file, the line and the fix, never a traceback.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from grader.language.verdicts import Tolerance

VISIBILITIES = ("visible", "hidden", "after_due_date")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["assignments", "items"],
    "additionalProperties": False,
    "properties": {
        "seed": {"type": "integer", "minimum": 0},
        "assignments": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "required": ["title", "atol", "rtol"],
                "additionalProperties": False,
                "properties": {
                    "title": {"type": "string"},
                    "atol": {"type": "number", "exclusiveMinimum": 0},
                    "rtol": {"type": "number", "exclusiveMinimum": 0},
                },
            },
        },
        "items": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "title", "points", "hint"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "pattern": r"^[a-z]+(\.[a-z_]+)+$"},
                    "title": {"type": "string", "minLength": 1},
                    "points": {"type": "number", "minimum": 0},
                    "hint": {"type": "string"},
                    "extra_credit": {"type": "boolean"},
                    "visibility": {"enum": list(VISIBILITIES)},
                    "depends_on": {"type": "array", "items": {"type": "string"}},
                    "examples": {"type": "integer", "minimum": 1, "maximum": 10000},
                    "timeout": {"type": "number", "exclusiveMinimum": 0},
                    "partial_credit": {"type": "boolean"},
                },
            },
        },
    },
}


class RubricError(Exception):
    """The rubric is invalid; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Item:
    id: str
    title: str
    points: float
    hint: str
    extra_credit: bool = False
    visibility: str = "visible"
    depends_on: tuple[str, ...] = ()
    examples: int = 50
    timeout: float = 5.0
    partial_credit: bool = True

    @property
    def assignment(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class Rubric:
    path: Path
    items: tuple[Item, ...]
    tolerances: dict[str, Tolerance]
    titles: dict[str, str]
    seed: int = 0
    digest: str = ""
    by_id: dict[str, Item] = field(default_factory=dict, compare=False)

    def for_assignments(self, assignments: set[str]) -> list[Item]:
        return [item for item in self.items if item.assignment in assignments]


def _line_of(text: str, path: list[Any]) -> int:
    """The 1-based line of the YAML node at a JSON path (as far as the path exists). Only an
    error needs it, so only then is the rubric parsed into nodes that keep their lines."""
    node = yaml.compose(text)
    for key in path:
        if isinstance(node, yaml.MappingNode):
            match = [v for k, v in node.value if k.value == key]
            if not match:
                break
            node = match[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            break
    return node.start_mark.line + 1


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it: a tenth of the time of the pure-Python one."""


def load(path: Path) -> Rubric:
    try:
        text = path.read_text()
        data = yaml.load(text, Loader=_LOADER)
    except OSError as exc:
        raise RubricError(f"{path}: cannot read the rubric ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise RubricError(
            f"{path}{line}: not valid YAML ({getattr(exc, 'problem', exc)})"
        ) from None
    errors = sorted(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(data),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        error = errors[0]
        where = "/".join(str(p) for p in error.absolute_path) or "top level"
        raise RubricError(
            f"{path}:{_line_of(text, list(error.absolute_path))}: {where}: "
            f"{error.message}. See 'Writing a rubric' in README.md."
        )
    items = tuple(
        Item(**{**raw, "depends_on": tuple(raw.get("depends_on", ()))}) for raw in data["items"]
    )
    by_id = {item.id: item for item in items}
    _check_references(path, text, data, by_id)
    return Rubric(
        path=path,
        items=items,
        tolerances={
            name: Tolerance(a["atol"], a["rtol"]) for name, a in data["assignments"].items()
        },
        titles={name: a["title"] for name, a in data["assignments"].items()},
        seed=data.get("seed", 0),
        digest=hashlib.sha256(text.encode()).hexdigest(),
        by_id=by_id,
    )


def _check_references(path: Path, text: str, data: dict[str, Any], by_id: dict[str, Item]) -> None:
    seen: set[str] = set()
    for index, raw in enumerate(data["items"]):
        line = functools.partial(_line_of, text, ["items", index])
        if raw["id"] in seen:
            raise RubricError(f"{path}:{line()}: item {raw['id']!r} is defined twice")
        seen.add(raw["id"])
        if raw["id"].split(".")[0] not in data["assignments"]:
            raise RubricError(
                f"{path}:{line()}: item {raw['id']!r} belongs to no assignment "
                f"listed under 'assignments'"
            )
        for dep in raw.get("depends_on", []):
            if dep not in by_id:
                raise RubricError(f"{path}:{line()}: {raw['id']!r} depends on unknown item {dep!r}")


def selected(item_id: str, only: list[str] | tuple[str, ...]) -> bool:
    """Does ``--only`` select this item? Nothing given selects all; an id, or an id prefix
    ending at a dot (``micrograd.ops`` is every micrograd op), selects those."""
    return not only or any(item_id == o or item_id.startswith(o.rstrip(".") + ".") for o in only)
