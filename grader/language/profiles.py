"""A course's API as data: which of the grader's concepts it has, so that an engine written for
another course is graded on what that course asks of it.

A profile is a YAML file (``courses/<name>/profile.yaml``) validated against ``SCHEMA``; a
rubric names the profile it grades (``profile:``). For each assignment it says the kind of
graph, the ops of the op table the API has (``grader.language.graphs``) and where the walk
lives: ``build_topo`` at the engine module's top level (``module``), graded alone, or built
inside ``backward()`` (``nested``, as in Karpathy's micrograd), graded with the whole walk; a
module-level ``zero_grad`` (``module``) or none (``absent``); whether ``Tensor.backward``
leaves a leaf made with ``requires_grad=False`` without a gradient (``frozen_leaves: no_grad``),
gives it one like any input (``grad``, as needle does), or the course does not say
(``unspecified``, the babygrad book). An assignment's ``api:`` block
spells its API in the course's own words: a tensor course's (``TensorApi``), or a scalar
course's whose ops are classes with a context (``FunctionApi``, MiniTorch's), graded by a suite
of that model; a scalar assignment without one is micrograd's closures, whose walk keeps the
names of this course's scalar API.
A grading test names what it needs (an op, ``walk.topo``, ``walk.nested``, ``walk.zero_grad``,
``walk.frozen_leaves``, ``broadcasting``, ``kinks``, ``operator.<op>``): the tests of what a
profile's API does not have are not run, and the profile's rubric has no item for them.

An assignment's contract states the domain its course specifies (``domain:``, the forms of
input the grader may draw: ``grader.language.domains``), its own definitions of ops
(``definitions:``, ``grader.language.definitions``) and its editions (``editions:``, each told
apart from the upload by a file only its layout has, with the ops it lacks:
``grader.language.editions``), and its conventions (``conventions:``, each charged only where
the course's own words are quoted: ``grader.language.conventions``). Without them an
assignment is this course's contract: every form, the op table's definitions, one edition;
and every convention read the least demanding way.

The grading suites name their items in this course's words (``babygrad.ops.mul``); a course's
rubric names them in its own: the assignment's name for the prefix, and ``items:`` for an
item its course calls otherwise (``ops.mul: ops.multiply``). ``Profile.item_id`` translates.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.language import adapters
from grader.language.assignments import (
    MICROGRAD,
    Assignment,
    function_assignment,
    of_kind,
    of_name,
    tensor_assignment,
)
from grader.language.conventions import KEYS as CONVENTION_KEYS
from grader.language.conventions import Convention, quoted, stated, unquoted
from grader.language.definitions import EXACT, Definitions
from grader.language.domains import AXES_FORMS, EVERY_FORM, MATMUL_BATCHES, Domain
from grader.language.editions import FINGERPRINT, Edition, detected, left_as_given
from grader.language.function_api import FunctionApi
from grader.language.graphs import (
    BABYGRAD_OPERATOR_FORMS,
    MICROGRAD_OPS,
    OPS,
    SCALAR_FUNCTION_OPS,
    TENSOR_OP_ITEMS,
    without_param,
)
from grader.language.tensor_api import BABYGRAD_API, TensorApi
from grader.language.yamlfiles import line_of, load_validated
from grader.layout import DEFAULT_PROFILE

KIND_OPS = {
    "scalar": (*MICROGRAD_OPS, *SCALAR_FUNCTION_OPS),
    "tensor": tuple(dict.fromkeys((*BABYGRAD_OPERATOR_FORMS, *TENSOR_OP_ITEMS.values()))),
}
"""The ops of the op table a profile of each kind of graph may list."""
TOPO = "walk.topo"
NESTED = "walk.nested"
ZERO_GRAD = "walk.zero_grad"
FROZEN_LEAVES = "walk.frozen_leaves"
ROOTS = "walk.roots"
SECOND_ADDS = "second_backward.accumulate"
BROADCASTING = "broadcasting"
KINKS = "kinks"
ANY_OP = "ops.any"
"""The assignment has an op left to draw: an edition may give every one (11-785's HW3P1 hands
out every backward), and whole graphs of the student's ops are then not in it."""
LEDGER = "ledger"
"""The ledger a walk sums gradients into (11-785's GradientBuffer): an edition may give it
(``given: {ledger: [...]}``), and the tests of the item that grades it then do not run."""
WALK_ITEMS = ("topo", "backward", "accumulate", "zero_grad", "deep")
"""The items that grade a walk: a course that gives its walk (``topo: given``) has none."""
OPERATOR = "operator."
"""``operator.<op>``: the API applies the op with one of Tensor's operators or methods, not
by calling its op class: which op the operator reaches is then the student's to grade."""
SPELLED = "spelled."
"""``spelled.<k>.<op>``: the API documents a k-th further spelling of the op (``spellings:``,
``a.matmul(b)`` beside ``a @ b``), the student's to route as much as the first."""
MAX_SPELLINGS = 2
"""Further spellings of one op a profile may give: a method and a function beside an
operator."""

DEFINED_NAME = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$"
"""An edition's ``defines``: a top-level name of its marker file, or a class's method."""
NAMED = {"type": "string", "pattern": DEFINED_NAME}
"""An edition's ``defines`` or ``without``, one name of a list."""
SEE = "See 'Profiles' in docs/course-authors.md."
"""Where a mistake in a profile sends its author."""
SNIPPETS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": list(adapters.SNIPPET_KEYS),
    "additionalProperties": False,
    "properties": {
        key: (
            {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}
            if key in adapters.SNIPPET_TABLES
            else {"type": "string", "minLength": 1}
        )
        for key in (*adapters.SNIPPET_KEYS, *adapters.SNIPPET_OPTIONS)
    },
}
"""How an adapter's course spells its snippets (``api: snippets``,
``grader.language.tape_snippets``)."""
WALK_PLACES = {
    "topo": {"enum": ["module", "nested", "given"]},
    "zero_grad": {"enum": ["module", "absent"]},
}
"""Where an assignment's walk keeps its parts (``Walk``)."""
QUOTED = {
    "quote": {"type": "string", "minLength": 1},
    "source": {"type": "string", "minLength": 1},
}
"""The course's own words, and where they are."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["profile", "title", "assignments"],
    "additionalProperties": False,
    "properties": {
        "profile": {"type": "string", "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$"},
        "title": {"type": "string", "minLength": 1},
        "assignments": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "required": ["kind", "walk", "ops"],
                "additionalProperties": False,
                "properties": {
                    "kind": {"enum": list(KIND_OPS)},
                    "api": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            **{
                                name: {"type": "string", "minLength": 1}
                                for name in (
                                    "package",
                                    "folder",
                                    "leaf",
                                    "value",
                                    "function",
                                    "forward",
                                    "backward",
                                    "node_op",
                                    "node_inputs",
                                    "scalar",
                                    "derivative",
                                    "apply",
                                    "context",
                                    "inputs",
                                    "topological_sort",
                                    "backpropagate",
                                    "central_difference",
                                    "pair",
                                    "ops_module",
                                    "tensor_module",
                                )
                            },
                            "aliases": {
                                "type": "array",
                                "minItems": 1,
                                "uniqueItems": True,
                                "items": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
                            },
                            "grad": {"enum": ["tensor", "array"]},
                            "init": {"type": "boolean"},
                            "adapter": {"type": "string", "pattern": r"^[A-Za-z0-9_]+\.py$"},
                            "snippets": SNIPPETS_SCHEMA,
                            "variable": {
                                "type": "object",
                                "additionalProperties": {"type": "string", "minLength": 1},
                            },
                            "files": {
                                "type": "array",
                                "minItems": 1,
                                "items": {
                                    "type": "string",
                                    "pattern": r"^([A-Za-z0-9_]+/)*[A-Za-z0-9_]+\.py$",
                                },
                            },
                            "broadcasts": {"type": "boolean"},
                            "classes": {
                                "type": "object",
                                "additionalProperties": {"type": "string", "minLength": 1},
                            },
                            "operators": {
                                "type": "object",
                                "additionalProperties": {"type": "string", "minLength": 1},
                            },
                            "spellings": {
                                "type": "object",
                                "additionalProperties": {
                                    "type": "array",
                                    "minItems": 1,
                                    "maxItems": MAX_SPELLINGS,
                                    "items": {"type": "string", "minLength": 1},
                                },
                            },
                        },
                    },
                    "walk": {
                        "type": "object",
                        "required": ["topo", "zero_grad"],
                        "additionalProperties": False,
                        "properties": WALK_PLACES,
                    },
                    "conventions": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            key: {
                                "type": "object",
                                "required": ["rule"],
                                "additionalProperties": False,
                                "properties": {"rule": {"enum": list(rules.rules)}, **QUOTED},
                            }
                            for key, rules in CONVENTION_KEYS.items()
                        },
                    },
                    "items": {
                        "type": "object",
                        "additionalProperties": {
                            "oneOf": [
                                {"type": "string", "pattern": r"^[a-z0-9_]+(\.[a-z0-9_]+)*$"},
                                {"type": "null"},
                            ]
                        },
                    },
                    "ops": {
                        "type": "array",
                        "minItems": 1,
                        "uniqueItems": True,
                        "items": {"type": "string"},
                    },
                    "domain": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "axes": {
                                "type": "array",
                                "minItems": 1,
                                "uniqueItems": True,
                                "items": {"enum": list(AXES_FORMS)},
                                "contains": {"const": "none"},
                            },
                            "matmul_batch": {"enum": list(MATMUL_BATCHES)},
                            "max_operands": {"type": "integer", "minimum": 2},
                            "forward_axes": {
                                "type": "array",
                                "uniqueItems": True,
                                "items": {"enum": list(AXES_FORMS)},
                            },
                        },
                    },
                    "definitions": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "log": {
                                "type": "object",
                                "required": ["eps"],
                                "additionalProperties": False,
                                "properties": {
                                    "eps": {
                                        "type": "number",
                                        "exclusiveMinimum": 0,
                                        "maximum": 1e-4,
                                    }
                                },
                            }
                        },
                    },
                    "editions": {
                        "type": "object",
                        "minProperties": 1,
                        "additionalProperties": {
                            "type": "object",
                            "required": ["marker"],
                            "additionalProperties": False,
                            "properties": {
                                "marker": {
                                    "type": "string",
                                    "pattern": r"^([A-Za-z0-9_]+/)*[A-Za-z0-9_]+\.py$",
                                },
                                "lacks": {
                                    "type": "array",
                                    "uniqueItems": True,
                                    "items": {"type": "string"},
                                },
                                "defines": {
                                    "oneOf": [
                                        {"type": "string", "pattern": DEFINED_NAME},
                                        {"type": "array", "items": NAMED},
                                    ]
                                },
                                "without": {"type": "array", "items": NAMED},
                                "broadcasts": {"type": "boolean"},
                                "api": {"type": "object", "minProperties": 1},
                                "walk": {
                                    "type": "object",
                                    "required": ["quote", "source"],
                                    "minProperties": 3,
                                    "additionalProperties": False,
                                    "properties": {**WALK_PLACES, **QUOTED},
                                },
                                "given": {
                                    "type": "object",
                                    "additionalProperties": {
                                        "type": "array",
                                        "minItems": 1,
                                        "uniqueItems": True,
                                        "items": {"type": "string", "pattern": FINGERPRINT},
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


class ProfileError(Exception):
    """The profile is invalid; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Walk:
    """Where an assignment's walk lives in the course's API."""

    topo: str
    """``module``: ``build_topo(root)`` at the engine module's top level, graded alone and
    replaced by a correct order while ``backward()`` is graded; ``nested``: the order is built
    inside ``backward()``, so the whole walk is graded together; ``given``: the course gives
    its students the walk (TinyTorch's ``Tensor.backward``), which is theirs to use, not to be
    graded on: no walk item, and whole graphs are walked by the grader over the student's
    ops (through the course's adapter)."""
    zero_grad: str
    """``module``: ``zero_grad(root)`` at the engine module's top level; ``absent``."""
    frozen_leaves: str = "unspecified"
    """The ``frozen_leaves`` convention (``grader.language.conventions``): ``no_grad``,
    ``Tensor.backward`` leaves a leaf made with ``requires_grad=False`` (and what is computed
    from such leaves alone) without a gradient, as babygrad does; ``grad``: it gives every
    input one (needle), so the grader makes no such leaves; ``unspecified``: the course does
    not say what such a leaf gets, nor what ``backward()`` on a tensor that requires no grad
    does (PyTorch raises there), so the grader makes no such leaves either."""
    second_backward: str = "unspecified"
    """The ``second_backward`` convention: what a second ``backward()`` does to the gradient a
    first one left on a node both reach (each call keeps a ledger of its own): ``overwrite``,
    the node gets the second walk's gradient (this course's babygrad, needle: each stores its
    ledger entry in ``.grad``); ``accumulate``, it is added to what was there (micrograd's
    closures); ``unspecified``, either is right."""


@dataclass(frozen=True)
class AssignmentProfile:
    """One assignment of a course's API."""

    name: str
    kind: str
    walk: Walk
    ops: tuple[str, ...]
    api: TensorApi | FunctionApi | None = None
    """The assignment's spelling (``api:``): a tensor course's, or a scalar course's whose ops
    are classes; None: this course's babygrad or micrograd."""
    items: dict[str, str | None] = field(default_factory=dict)
    """A suite's item (without the prefix) -> what this course's rubric calls it; None: the
    course has no such item (needle composes ``a - b`` from ops of its own, so it has no
    subtraction op to grade alone)."""
    domain: Domain = EVERY_FORM
    definitions: Definitions = EXACT
    editions: tuple[Edition, ...] = ()
    edition: Edition | None = None
    """The edition the graded upload was detected to be (``Profile.as_uploaded``), whose
    ``ops`` it keeps; None: every op of the list."""
    conventions: dict[str, Convention] = field(default_factory=lambda: stated({}))
    """Every convention key (``grader.language.conventions``), as the course's words state
    it or read the least demanding way."""

    def convention(self, key: str) -> Convention:
        return self.conventions[key]

    def in_edition(self, edition: Edition | None) -> AssignmentProfile:
        """This assignment as ``edition`` asks it: without the ops that edition lacks, nor
        those the upload left as the course gives them (``Edition.kept``), with the contract
        keys it changes (``Edition.broadcasts``)."""
        if edition is None:
            return self
        ops = tuple(op for op in self.ops if op not in (*edition.lacks, *edition.kept))
        api = self.api
        if edition.broadcasts is not None and isinstance(api, TensorApi):
            api = dataclasses.replace(api, broadcasts=edition.broadcasts)
        if edition.api and api is not None:
            api = _spelled(api, edition.api)
        walk = dataclasses.replace(self.walk, **edition.walk)
        return dataclasses.replace(self, ops=ops, edition=edition, api=api, walk=walk)

    def named_in(self, submission: Path) -> AssignmentProfile:
        """This assignment with its package under the name the prepared ``submission`` gives
        it (``api: aliases``): the worker imports it and the snippets write it so."""
        if not isinstance(self.api, TensorApi | FunctionApi) or not self.api.aliases:
            return self
        return dataclasses.replace(self, api=self.api.found_in(submission))

    def edition_in(self, submission: Path) -> Edition | None:
        """The edition a prepared submission holds, with the ops it left as that edition's
        starter gives them (None: the assignment has none, or none matched: every op is
        graded)."""
        if not self.editions:
            return None
        api = self.api
        parts = (api.folder, api.package) if api is not None else (self.name,)
        folder = submission.joinpath(*(p for p in parts if p))
        edition = detected(self.editions, folder)
        if edition is None or not edition.given:
            return edition
        return left_as_given(edition, folder)

    def has(self, need: str) -> bool:
        """Does this API have ``need``: an op of the op table, ``walk.topo`` (a module-level
        ``build_topo``), ``walk.nested`` (an order built inside ``backward()``),
        ``walk.zero_grad``, ``walk.frozen_leaves`` (leaves that do not require grad get
        none), ``walk.roots`` (a walk may start at any node, not only where a tape ends),
        ``second_backward.accumulate`` (a second ``backward()`` adds, in the course's
        words), ``broadcasting`` (implicit, in elementwise ops), ``kinks`` (relu's and abs's
        gradient at exactly 0, in the course's words), ``ledger`` (the student's, not left as
        the edition's starter gives it), ``ops.any`` (an op left to draw), ``operator.<op>``
        (the op reached through an operator or method), ``spelled.<k>.<op>`` (a k-th further
        spelling of the op)?"""
        if need == TOPO:
            return self.walk.topo == "module"
        if need == NESTED:
            return self.walk.topo == "nested"
        if need == ZERO_GRAD:
            return self.walk.zero_grad == "module"
        if need == FROZEN_LEAVES:
            return self.walk.frozen_leaves == "no_grad"
        if need == ROOTS:  # a course adapter's walk starts where its tape ends
            return not (isinstance(self.api, TensorApi) and self.api.adapter)
        if need == SECOND_ADDS:
            return self.walk.second_backward == "accumulate"
        if need == BROADCASTING:
            return self.kind == "tensor" and (self.api or BABYGRAD_API).broadcasts
        if need == KINKS:
            return self.convention(KINKS).charged
        if need == LEDGER:
            return self.edition is None or LEDGER not in self.edition.kept
        if need == ANY_OP:
            return bool(self.ops)
        if need.startswith(OPERATOR):
            op = need.removeprefix(OPERATOR)
            api = self.api or BABYGRAD_API
            # Through an adapter the grader applies each op itself: no operator to route.
            adapted = isinstance(api, TensorApi) and bool(api.adapter)
            return op in self.ops and api.operator(op) and not adapted
        if need.startswith(SPELLED):
            form, op = need.removeprefix(SPELLED).split(".", 1)
            api = self.api or BABYGRAD_API
            spelled = isinstance(api, TensorApi) and not api.adapter
            return op in self.ops and spelled and int(form) <= len(api.spellings.get(op, ()))
        return need in self.ops


@dataclass(frozen=True)
class Profile:
    """A course's API: its assignments by name (the rubric's item prefixes)."""

    name: str
    title: str
    path: Path
    assignments: dict[str, AssignmentProfile]
    text: str = field(default="", repr=False)
    """The file as read, and its adapters' text: a rubric's digest covers it (what is graded
    depends on it)."""
    _by_kind: dict[str, Assignment] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """``assignment``'s answers: the checks ask it thousands of times a grading run, and each
    answer built its API's spelling anew (a profile never changes; ``replace`` starts empty)."""

    def of(self, assignment: str) -> AssignmentProfile:
        return self.assignments[assignment]

    def of_kind(self, kind: str) -> AssignmentProfile | None:
        return next((a for a in self.assignments.values() if a.kind == kind), None)

    def assignment(self, kind: str) -> Assignment:
        """The assignment that grades graphs of ``kind`` in this course: its name (the
        rubric's item prefix) and its API's spelling."""
        if kind not in self._by_kind:
            self._by_kind[kind] = self._assignment(kind)
        return self._by_kind[kind]

    def _assignment(self, kind: str) -> Assignment:
        own = self.of_kind(kind)
        if own is None:
            return of_kind(kind)
        if isinstance(own.api, FunctionApi):
            return function_assignment(own.name, own.api)
        if own.kind == "scalar":
            return dataclasses.replace(MICROGRAD, name=own.name)
        return tensor_assignment(own.name, own.api or BABYGRAD_API)

    @property
    def graded(self) -> tuple[Assignment, ...]:
        """Every assignment of the course, in the profile's order."""
        return tuple(self.assignment(own.kind) for own in self.assignments.values())

    def named(self, name: str) -> Assignment:
        """The course's assignment called ``name``."""
        return self.assignment(self.of(name).kind)

    def definitions(self, kind: str) -> Definitions:
        """The definitions of the course's assignment of ``kind`` (the op table's without)."""
        own = self.of_kind(kind)
        return EXACT if own is None else own.definitions

    @property
    def editions(self) -> str:
        """The editions graded, the ops each upload left as given, and the packages' names,
        as text (empty: none detected, no other name): what is drawn and what the snippets
        import depend on them, so a recording of one edition's run is never replayed for
        another's."""
        return "".join(
            f" {name}={own.edition.name}" + "".join(f"-{op}" for op in own.edition.kept)
            for name, own in self.assignments.items()
            if own.edition is not None
        ) + "".join(
            f" {name}:{own.api.package}"
            for name, own in self.assignments.items()
            if isinstance(own.api, TensorApi | FunctionApi) and own.api.aliases
        )

    def named_in(self, submission: Path) -> Profile:
        """This profile with each assignment's package under the name ``submission`` (a
        prepared upload, or a course's reference) gives it."""
        assignments = {name: own.named_in(submission) for name, own in self.assignments.items()}
        return dataclasses.replace(self, assignments=assignments)

    def as_uploaded(self, submission: Path) -> Profile:
        """This profile with each assignment's package under the name ``submission`` gives
        it, in the edition it holds."""
        assignments = {
            name: own.in_edition(own.edition_in(submission))
            for name, own in self.named_in(submission).assignments.items()
        }
        return dataclasses.replace(self, assignments=assignments)

    def item_id(self, suite_item: str) -> str | None:
        """A grading suite's item (``babygrad.ops.mul``) as this course's rubric names it
        (``needle.ops.multiply``): the course's assignment of that kind, and its own word for
        the rest where ``items:`` gives one; None where it says the course has no such item."""
        prefix, rest = suite_item.split(".", 1)
        own = self.of_kind(of_name(prefix).kind)
        if own is None:
            return suite_item
        if own.walk.topo == "given" and rest in WALK_ITEMS:
            return None
        renamed = own.items.get(rest, rest)
        return None if renamed is None else f"{own.name}.{renamed}"


def load(path: Path) -> Profile:
    """The profile at ``path``; a ``ProfileError`` naming the line of the first problem."""
    data, text = load_validated(path, SCHEMA, "the profile", SEE, ProfileError)
    assignments = {}
    for name, raw in data["assignments"].items():
        unknown = [op for op in raw["ops"] if op not in KIND_OPS[raw["kind"]]]
        if unknown:
            line = line_of(text, ["assignments", name, "ops"])
            raise ProfileError(
                f"{path}:{line}: assignments/{name}/ops: {', '.join(unknown)} is not an op of "
                f"{raw['kind']} graphs (one of {', '.join(KIND_OPS[raw['kind']])}). "
                f"{SEE}"
            )
        api = _api(path, text, name, raw)
        if isinstance(api, TensorApi):
            _check_templates(path, text, name, api, raw["ops"])
            api = _with_adapter(path, text, name, api)
            _check_adapted_walk(path, text, name, raw["walk"]["topo"], api)
            _check_snippets(path, text, name, raw["ops"], api)
        _check_contract(path, text, name, raw, api)
        conventions = _conventions(path, text, name, raw.get("conventions", {}))
        assignments[name] = AssignmentProfile(
            name=name,
            kind=raw["kind"],
            walk=Walk(
                **raw["walk"],
                frozen_leaves=conventions["frozen_leaves"].rule,
                second_backward=conventions["second_backward"].rule,
            ),
            ops=tuple(raw["ops"]),
            api=api,
            items=dict(raw.get("items", {})),
            domain=_domain(raw.get("domain", {})),
            definitions=Definitions(
                log_eps=raw.get("definitions", {}).get("log", {}).get("eps", 0.0)
            ),
            editions=tuple(
                Edition(
                    edition,
                    spec["marker"],
                    tuple(spec.get("lacks", ())),
                    _names(spec.get("defines", ())),
                    {op: tuple(prints) for op, prints in spec.get("given", {}).items()},
                    broadcasts=spec.get("broadcasts"),
                    without=tuple(spec.get("without", ())),
                    api=spec.get("api", {}),
                    walk={k: v for k, v in spec.get("walk", {}).items() if k in WALK_PLACES},
                    walk_words=quoted(spec["walk"]) if "walk" in spec else "",
                )
                for edition, spec in raw.get("editions", {}).items()
            ),
            conventions=conventions,
        )
    # What is graded depends on an adapter too: a rubric's digest covers its text.
    adapted = "".join(
        a.api.adapter_source for a in assignments.values() if isinstance(a.api, TensorApi)
    )
    return Profile(
        name=data["profile"],
        title=data["title"],
        path=path,
        assignments=assignments,
        text=text + adapted,
    )


def _spelled(api: TensorApi | FunctionApi, keys: Mapping[str, Any]) -> TensorApi | FunctionApi:
    """``api`` with an edition's own spelling of ``keys`` (a mapping merged into the
    profile's, so an edition names only what its layout changes)."""
    own = api.to_json()
    merged = {
        key: {**own[key], **value} if isinstance(value, Mapping) else value
        for key, value in keys.items()
    }
    return type(api).from_json({**own, **merged})


def _names(defines: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """An edition's ``defines``: one name, or a list of them."""
    return (defines,) if isinstance(defines, str) else tuple(defines)


def _domain(raw: dict[str, Any]) -> Domain:
    """A ``domain:`` block as a ``Domain`` (what it leaves out: every form)."""
    return Domain(
        axes=tuple(raw.get("axes", EVERY_FORM.axes)),
        matmul_batch=raw.get("matmul_batch", EVERY_FORM.matmul_batch),
        max_operands=raw.get("max_operands", EVERY_FORM.max_operands),
        forward_axes=tuple(raw.get("forward_axes", EVERY_FORM.forward_axes)),
    )


def _conventions(path: Path, text: str, name: str, raw: dict[str, Any]) -> dict[str, Convention]:
    """The assignment's conventions; a ``ProfileError`` for one charged without the course's
    words (``conventions.unquoted``), on its line."""
    for problem in unquoted(raw):
        key = problem.partition(":")[0]
        line = line_of(text, ["assignments", name, "conventions", key])
        raise ProfileError(f"{path}:{line}: assignments/{name}/conventions/{problem}. {SEE}")
    return stated(raw)


def _check_contract(
    path: Path, text: str, name: str, raw: dict[str, Any], api: TensorApi | FunctionApi | None
) -> None:
    """Definitions and editions name ops of the assignment's list; editions need a package
    (their marker files are looked for in it): a tensor or class-based API's, or micrograd's
    closures' own (the assignment's name)."""
    where = ["assignments", name]
    for op in raw.get("definitions", {}):
        if op not in raw["ops"]:
            line = line_of(text, [*where, "definitions", op])
            raise ProfileError(
                f"{path}:{line}: assignments/{name}/definitions: {op} is not in the "
                f"assignment's ops. {SEE}"
            )
    for edition, spec in raw.get("editions", {}).items():
        line = line_of(text, [*where, "editions", edition])
        if api is None and raw["kind"] != "scalar":
            raise ProfileError(
                f"{path}:{line}: assignments/{name}/editions: an edition is told apart by a "
                "file of the assignment's package: give the assignment an api: with its "
                f"package. {SEE}"
            )
        for part in ("lacks", "given"):
            known = (*raw["ops"], LEDGER) if part == "given" else raw["ops"]
            unknown = [op for op in spec.get(part, ()) if op not in known]
            if unknown:
                raise ProfileError(
                    f"{path}:{line}: assignments/{name}/editions/{edition}/{part}: "
                    f"{', '.join(unknown)} is not in the assignment's ops. "
                    f"{SEE}"
                )
        known_keys = [f.name for f in dataclasses.fields(api)] if api is not None else []
        foreign = [key for key in spec.get("api", {}) if key not in known_keys]
        if foreign:
            line = line_of(text, [*where, "editions", edition, "api", foreign[0]])
            raise ProfileError(
                f"{path}:{line}: assignments/{name}/editions/{edition}/api: "
                f"{', '.join(foreign)} is not a key of the assignment's api: "
                f"(one of {', '.join(known_keys)}). {SEE}"
            )


def _check_templates(path: Path, text: str, name: str, api: TensorApi, ops: list[str]) -> None:
    """Every op's spelling, and each further one (``spellings:``, of an op the assignment
    has), is Python, with a parameter and with its default (no argument): a template that is
    not would fail in every student's run, as if it were their code."""
    for op in api.spellings:
        if op not in ops:
            line = line_of(text, ["assignments", name, "api", "spellings", op])
            raise ProfileError(
                f"{path}:{line}: assignments/{name}/api/spellings: {op} is not in the "
                f"assignment's ops. {SEE}"
            )
    for op in ops:
        try:
            spelled = [("operators", api.template(op))]
        except ValueError:
            spelled = []  # an op applied by its class only
        spelled += [("spellings", template) for template in api.spellings.get(op, ())]
        for key, template in spelled:
            _check_template(path, text, (name, key, op), template)


def _check_template(path: Path, text: str, where: tuple[str, str, str], template: str) -> None:
    """``template`` (of ``where``: the assignment, ``operators`` or ``spellings``, the op)
    compiles with a parameter and, where it takes one, without."""
    name, key, op = where
    operands = [f"x{i}" for i in range(OPS[op].arity)]
    sources = {template.format(*operands, p="1")}
    if without_param(template) != template:  # {p} is an argument: None leaves it out
        sources.add(without_param(template).format(*operands))
    for source in sources:
        try:
            compile(source, "<template>", "eval")
        except SyntaxError as exc:
            line = line_of(text, ["assignments", name, "api", key, op])
            raise ProfileError(
                f"{path}:{line}: assignments/{name}/api/{key}/{op}: {template!r} is not "
                f"a Python expression ({exc.msg}). "
                f"{SEE}"
            ) from None


def _check_adapted_walk(path: Path, text: str, name: str, topo: str, api: TensorApi) -> None:
    """A walk the profile grades must be one its adapter can run: all of the walk hooks
    (``grader.language.adapters.WALK_HOOKS``) where ``topo`` is not ``given``, and then all
    or none of them."""
    if not api.adapter:
        return
    hooks = adapters.walk_hooks(api.adapter_source)
    lacking = [hook for hook in adapters.WALK_HOOKS if hook not in hooks]
    if not lacking or (topo == "given" and not hooks):
        return
    line = line_of(text, ["assignments", name, "walk", "topo"])
    why = (
        f"walk.topo {topo} grades the student's walk, but {api.adapter} does not define "
        f"{', '.join(lacking)}: an adapter runs a student's walk through tape, record, walk "
        "and grad, or the course gives its walk (topo: given)"
        if topo != "given"
        else f"{api.adapter} defines {', '.join(hooks)} but not {', '.join(lacking)}: the walk "
        "hooks come together (tape, record, walk and grad)"
    )
    raise ProfileError(f"{path}:{line}: assignments/{name}/walk/topo: {why}. {SEE}")


def _check_snippets(path: Path, text: str, name: str, ops: list[str], api: TensorApi) -> None:
    """``api: snippets`` (``grader.language.tape_snippets``) spells a course adapter's
    snippets, every op of the profile among them (and ``sum``, which sums a graph's outputs)."""
    if not api.snippets:
        return
    where = f"{path}:{line_of(text, ['assignments', name, 'api', 'snippets'])}"
    if not api.adapter:
        raise ProfileError(
            f"{where}: assignments/{name}/api/snippets: spells an adapter's snippets, and the "
            f"api has no adapter. {SEE}"
        )
    lacking = [
        f"{part}.{op}"
        for part in ("forwards", "backwards")
        for op in (*ops, "sum")
        if op not in api.snippets[part]
    ]
    if lacking:
        raise ProfileError(
            f"{where}: assignments/{name}/api/snippets does not spell {', '.join(lacking)}. {SEE}"
        )


def _with_adapter(path: Path, text: str, name: str, api: TensorApi) -> TensorApi:
    """The spelling with its course adapter's text (``grader.language.adapters``), checked to
    define the protocol; it is never run here, only in the worker."""
    if not api.adapter:
        return api
    line = line_of(text, ["assignments", name, "api", "adapter"])
    where = f"{path}:{line}: assignments/{name}/api/adapter"
    file = path.parent / api.adapter
    if not file.is_file():
        raise ProfileError(f"{where}: no {api.adapter} beside the profile.")
    source = file.read_text(encoding="utf-8")
    try:
        lacking = adapters.missing(source)
    except SyntaxError as exc:
        raise ProfileError(f"{where}: {api.adapter}:{exc.lineno}: {exc.msg}.") from None
    if lacking:
        raise ProfileError(
            f"{where}: {api.adapter} does not define {', '.join(lacking)} (the adapter "
            "protocol: grader/language/adapters.py)."
        )
    return dataclasses.replace(api, adapter_source=source)


API_OF_KIND: dict[str, type[TensorApi] | type[FunctionApi]] = {
    "tensor": TensorApi,
    "scalar": FunctionApi,
}
"""The spelling an ``api:`` block gives, by kind of graph: a scalar assignment with one has
ops that are classes (MiniTorch's); without one it is micrograd's closures."""


def _api(path: Path, text: str, name: str, raw: dict[str, Any]) -> TensorApi | FunctionApi | None:
    if "api" not in raw:
        return None
    spelling = API_OF_KIND[raw["kind"]]
    known = [f.name for f in dataclasses.fields(spelling)]
    foreign = [key for key in raw["api"] if key not in known]
    if foreign:
        line = line_of(text, ["assignments", name, "api", foreign[0]])
        raise ProfileError(
            f"{path}:{line}: assignments/{name}/api: {', '.join(foreign)} is not part of a "
            f"{raw['kind']} API (one of {', '.join(known)}). "
            f"{SEE}"
        )
    api = spelling.from_json(raw["api"])
    if api.package in api.aliases:
        line = line_of(text, ["assignments", name, "api", "aliases"])
        raise ProfileError(
            f"{path}:{line}: assignments/{name}/api/aliases: {api.package} is the package's own "
            "name; aliases are its other names. See 'Grading another course's engine' in README.md."
        )
    return api


@functools.cache
def course() -> Profile:
    """This course's own profile, the default of every rubric and session."""
    return load(DEFAULT_PROFILE)
