"""``rubric.yaml``: what is graded, for how many points; validated against a JSON Schema.

A bad rubric is an error that names the file, the line and the fix, never a traceback.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.language import profiles
from grader.language.profiles import Profile
from grader.language.verdicts import Tolerance
from grader.language.yamlfiles import line_of, load_validated
from grader.layout import COURSES, DEFAULT_PROFILE

VISIBILITIES = ("visible", "hidden", "after_due_date")

SEE = "See 'Writing a rubric' in docs/course-authors.md."
"""Where a mistake in a rubric sends its author."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["assignments", "items"],
    "additionalProperties": False,
    "properties": {
        "seed": {"type": "integer", "minimum": 0},
        "profile": {"type": "string", "minLength": 1},
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
                    "import_budget": {"type": "number", "exclusiveMinimum": 0},
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
    profile: Profile = field(default_factory=profiles.course)
    """The course API it grades (``profile:``, a course's name or a path from the rubric's
    folder)."""
    import_budgets: dict[str, float] = field(default_factory=dict)
    """CPU seconds importing each assignment's engine may take, where the rubric sets it."""
    seed: int = 0
    digest: str = ""
    graded_digest: str = ""
    """What is graded: ``digest`` without the items' points, which only scale results, so a
    batch rescores its stored grades when only they change (``batch.batch``)."""
    by_id: dict[str, Item] = field(default_factory=dict, compare=False)

    def for_assignments(self, assignments: set[str]) -> list[Item]:
        return [item for item in self.items if item.assignment in assignments]

    def selected_items(self, assignments: set[str], only: tuple[str, ...]) -> list[Item]:
        """The items of ``assignments`` that ``--only`` selects: the ones a grade must score,
        each exactly once."""
        return [item for item in self.for_assignments(assignments) if selected(item.id, only)]


def load(path: Path) -> Rubric:
    data, text = load_validated(path, SCHEMA, "the rubric", SEE, RubricError)
    items = tuple(
        Item(**{**raw, "depends_on": tuple(raw.get("depends_on", ()))}) for raw in data["items"]
    )
    by_id = {item.id: item for item in items}
    profile = _profile(path, text, data)
    _check_references(path, text, data, by_id)
    return Rubric(
        path=path,
        profile=profile,
        items=items,
        tolerances={
            name: Tolerance(a["atol"], a["rtol"]) for name, a in data["assignments"].items()
        },
        titles={name: a["title"] for name, a in data["assignments"].items()},
        import_budgets={
            name: a["import_budget"]
            for name, a in data["assignments"].items()
            if "import_budget" in a
        },
        seed=data.get("seed", 0),
        digest=hashlib.sha256((text + profile.text).encode()).hexdigest(),
        graded_digest=_graded_digest(data, profile),
        by_id=by_id,
    )


def _graded_digest(data: dict[str, Any], profile: Profile) -> str:
    """The rubric's digest with every item's ``points`` left out."""
    graded = {
        **data,
        "items": [{k: v for k, v in i.items() if k != "points"} for i in data["items"]],
    }
    text = json.dumps(graded, sort_keys=True, default=str)
    return hashlib.sha256((text + profile.text).encode()).hexdigest()


def _profile(path: Path, text: str, data: dict[str, Any]) -> Profile:
    """The profile of the course the rubric grades, which must describe every assignment the
    rubric grades. A ``profile.yaml`` beside the rubric is its course's (a course folder,
    shipped or of one's own); else the rubric names it: a course's name, looked for in the
    rubric's own ``courses/`` (a release, a Gradescope source) and then among the shipped
    courses, or a path from the rubric's folder. A rubric that names none grades this course."""
    named = data.get("profile")
    beside = path.parent / "profile.yaml"
    a_path = named is not None and ("/" in named or named.endswith((".yaml", ".yml")))
    if a_path:
        where = path.parent / named
    elif beside.is_file():
        where = beside
    elif named is None:
        where = DEFAULT_PROFILE
    else:
        own = path.parent / "courses" / named / "profile.yaml"
        where = own if own.is_file() else COURSES / named / "profile.yaml"
    try:
        profile = profiles.load(where)
    except profiles.ProfileError as exc:
        raise RubricError(str(exc)) from None
    if not a_path and where == beside and named not in (None, profile.name):
        raise RubricError(
            f"{path}:{line_of(text, ['profile'])}: the rubric names profile {named!r}, but the "
            f"profile beside it ({beside}) is {profile.name!r}"
        )
    missing = [name for name in data["assignments"] if name not in profile.assignments]
    if missing:
        raise RubricError(
            f"{path}:{line_of(text, ['assignments', missing[0]])}: assignment {missing[0]!r} "
            f"is not in the profile {where}"
        )
    return profile


def _check_references(path: Path, text: str, data: dict[str, Any], by_id: dict[str, Item]) -> None:
    seen: set[str] = set()
    for index, raw in enumerate(data["items"]):
        line = functools.partial(line_of, text, ["items", index])
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


NOT_ON_GRAPHS = ("zero_grad", "deep", "central_difference", "ops.lt", "ops.eq")
"""The suites' items whose code no whole graph runs: ``zero_grad`` (no graph calls it),
``deep`` (one chain of 100,000 nodes, extra credit), MiniTorch's ``central_difference`` (beside
the engine, not in it), ``lt`` and ``eq`` (their derivative is 0 wherever they are smooth:
graded one at a time, never drawn into a graph). Every other item's code is on a whole graph's
path: each op drawn, the walk, the ledger, implicit broadcasting, the operators."""


def graph_uses(rubric: Rubric, graphs: Item) -> tuple[str, ...]:
    """The items whose code the whole graphs of ``graphs`` (an assignment's ``*.graphs``) run,
    in the rubric's order: every other item of its assignment but extra credit and those of
    ``NOT_ON_GRAPHS`` (in the course's words, ``Profile.item_id``). Its ``depends_on`` must
    name each, so a bug in any costs the whole graphs at every seed (``scoring``)."""
    off = {
        rubric.profile.item_id(f"{kind}.{rest}")
        for kind in ("micrograd", "babygrad")
        for rest in NOT_ON_GRAPHS
    }
    return tuple(
        item.id
        for item in rubric.items
        if item.assignment == graphs.assignment
        and item.id != graphs.id
        and not item.extra_credit
        and item.id not in off
    )


def selected(item_id: str, only: list[str] | tuple[str, ...]) -> bool:
    """Does ``--only`` select this item? Nothing given selects all; an id, or an id prefix
    ending at a dot (``micrograd.ops`` is every micrograd op), selects those."""
    return not only or any(item_id == o or item_id.startswith(o.rstrip(".") + ".") for o in only)
