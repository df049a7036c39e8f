"""The course's own solution, run in the trusted parent through the same probes as students."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from grader.atomic import keep_newest, write_atomically
from grader.language import profiles
from grader.language.graphs import Graph
from grader.language.profiles import Profile
from grader.language.tensor_api import BABYGRAD_API, TensorApi
from grader.layout import grader_digest
from grader.oracles import Evaluation, OracleUnavailable
from grader.worker import answers, probes
from grader.worker.engines import load_engine, reinstate
from grader.worker.protocol import InvalidAnswer

name = "reference"
KNOWN: dict[str, dict[str, Any]] = {}
"""The reference's answers this process holds, by ``ReferenceOracle.key``: a batch lane's are
those its runs worked out (``grader.batch.lane``), so that the examples the next upload
replays are not evaluated on the reference again. The reference is trusted and deterministic:
an answer is the same whenever it is asked."""
FOUND: dict[str, dict[str, Any]] = {}
"""Those of ``KNOWN`` this process worked out itself, for its lane to keep."""
KNOWN_AT_MOST = 200_000
"""Answers kept at most (a few kilobytes each)."""
DECODED: dict[str, tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]] = {}
"""Of ``KNOWN``, the answers a lane learnt, decoded there once (``learn(..., decode=True)``):
their values and gradients, read-only. Every fork of the lane decoded each answer again for
every example it replayed, a twelfth of a replaying babygrad run's CPU."""
DECODED_AT_MOST = 20_000
"""Answers kept decoded at most (a graph's arrays take a kilobyte or so)."""
ANSWER_FILES = 32
"""Files of answers a folder keeps per grader source (``keep_answers``), the newest."""


def learn(answers: object, decode: bool = False) -> None:
    """Take ``answers`` (a trusted grading run's ``FOUND``, as it came back over a pipe or
    from a file) into ``KNOWN``, as far as there is room; anything but answers is ignored.
    ``decode``: into ``DECODED`` too (a lane, whose forks share them)."""
    if not isinstance(answers, dict):
        return
    room = max(0, KNOWN_AT_MOST - len(KNOWN))
    found = ((str(k), v) for k, v in answers.items() if isinstance(v, dict))
    learnt = dict(itertools.islice(found, room))
    KNOWN.update(learnt)
    room = max(0, DECODED_AT_MOST - len(DECODED)) if decode else 0
    for key, answer in itertools.islice(learnt.items(), room):
        with contextlib.suppress(InvalidAnswer, KeyError, TypeError):  # decoded where asked
            values, grads = _decoded(answer)
            for array in (*values, *grads):
                array.flags.writeable = False  # every fork shares the arrays
            DECODED[key] = values, grads


def _decoded(
    answer: dict[str, Any], grads: int | None = None
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """A graph's answer's values and gradients (the first ``grads`` of them, or all)."""
    return (
        tuple(answers.decode_array(v, "reference value") for v in answer["values"]),
        tuple(answers.decode_array(g, "reference grad") for g in answer["grads"][:grads]),
    )


def _answer_files() -> str:
    """The start of the names of this grader source's files of answers (the probes that
    produce an answer are part of it)."""
    return f"answers.{hashlib.sha256(grader_digest().encode()).hexdigest()[:32]}."


def answers_beside(recordings: Path) -> Path:
    """The folder of reference answers that goes with a folder of recordings: beside it, so
    that the recordings' own folder holds recordings only."""
    return recordings.with_name(f"{recordings.name}-answers")


def load_answers(folder: Path) -> None:
    """Take the answers earlier grading runs kept in ``folder`` (``keep_answers``): a grade
    replaying recorded examples evaluates none of them on the reference again."""
    try:
        paths = sorted(folder.glob(f"{_answer_files()}*.json"))
    except OSError:
        return
    for path in paths:
        try:
            learn(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue


def keep_answers(folder: Path) -> None:
    """Write the answers this process worked out into ``folder`` for the next grading runs,
    one file per run that found any, the newest ``ANSWER_FILES`` kept."""
    if not FOUND:
        return
    text = json.dumps(FOUND, separators=(",", ":"))
    prefix = _answer_files()
    kept = folder / f"{prefix}{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    with contextlib.suppress(OSError):
        write_atomically(kept, text, mode=0o600)
        keep_newest(kept, f"{prefix}*.json", ANSWER_FILES)


class ReferenceOracle:
    """Evaluates graphs with the reference engine of the course's profile (in float64: a
    tensor API's leaf spells its dtype, babygrad's gets it from ``_float64``)."""

    name = name

    def __init__(self, root: Path, profile: Profile | None = None) -> None:
        # A course's reference is written under its package's first name, whatever the
        # student's upload calls it (``api: aliases``).
        self.profile = (profile or profiles.course()).named_in(root)
        files = [
            a.package.engine_file if a.package else "micrograd/engine.py"
            for a in map(self.profile.assignment, ("scalar", "tensor"))
            if self.profile.of_kind(a.kind) is not None
        ]
        if not any((root / f).is_file() for f in files):
            raise OracleUnavailable(f"no reference engine in {root}")
        tensor = self.profile.of_kind("tensor")
        if tensor is not None and isinstance(tensor.api, TensorApi) and tensor.api.adapter:
            # A course adapter runs in the worker only: such a reference is checked as a
            # submission (check-reference); PyTorch and finite differences are the oracles.
            raise OracleUnavailable(f"{self.profile.name} is graded through its adapter")
        self.root = root
        self.engines: dict[str, Any] = {}

    @functools.cached_property
    def digest(self) -> str:
        """What the reference's answers depend on: its folder and files, and the profile."""
        hashed = hashlib.sha256(
            f"{self.root}\0{self.profile.text}\0{self.profile.editions}".encode()
        )
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                hashed.update(f"\0{path.relative_to(self.root)}\0".encode() + path.read_bytes())
        return hashed.hexdigest()

    def key(self, kind: str, case: dict[str, Any]) -> str:
        """The name of the reference's answer to ``case`` (a probe's request) in ``KNOWN``."""
        text = json.dumps([self.digest, kind, case], separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=20).hexdigest()

    def answer(self, kind: str, case: dict[str, Any]) -> dict[str, Any]:
        """The reference's answer to ``case``: known already, or worked out now."""
        return self._answer(self.key(kind, case), kind, case)

    def _answer(self, key: str, kind: str, case: dict[str, Any]) -> dict[str, Any]:
        known = KNOWN.get(key)
        if known is None:
            engine = self.engine(kind)
            reinstate(engine)
            probe = probes.probe_graph if "out_grad" not in case else probes.probe_op
            known = probe(engine, case)
            if len(KNOWN) < KNOWN_AT_MOST:
                KNOWN[key] = FOUND[key] = known
        return known

    def engine(self, kind: str) -> Any:
        assignment = self.profile.assignment(kind)
        if assignment.name not in self.engines:
            if functions := assignment.functions:
                engine = load_engine(
                    self.root, assignment.name, functions.package, functions.folder, whole=True
                )
                engine.api = functions
            elif kind == "scalar":
                engine = load_engine(self.root, "micrograd")
            else:
                api = assignment.api
                paths = (api.ops_path, api.tensor_path)
                loaded = load_engine(
                    self.root, assignment.name, api.package, api.folder, paths=paths
                )
                tensor = _float64(loaded.Tensor) if api == BABYGRAD_API else loaded.Tensor
                engine = SimpleNamespace(
                    Tensor=tensor, ops=loaded.ops, api=api, modules=loaded.modules
                )
            self.engines[assignment.name] = engine
        return self.engines[assignment.name]

    def evaluate_graph(self, graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
        case: dict[str, Any] = {"graph": graph.to_json()}
        if out_grad is not None:
            case["out_grad"] = np.asarray(out_grad).tolist()
        key = self.key(graph.kind, case)
        decoded = DECODED.get(key) if key in KNOWN else None
        if decoded is None:  # the leaves' gradients alone are asked of a whole graph
            leaves = len(graph.leaves) if out_grad is None else None
            decoded = _decoded(self._answer(key, graph.kind, case), leaves)
        values, grads = decoded
        if out_grad is None:
            grads = grads[: len(graph.leaves)]
        else:  # the op probe reports only the output's value
            values = (*graph.leaves, *values)
        return Evaluation(values, grads)


def _float64(tensor_class: type) -> Any:
    """Build reference leaves in float64: the oracle should not carry float32 rounding."""

    def make(data: Any, requires_grad: bool = True, dtype: str = "float64") -> Any:
        return tensor_class(
            np.asarray(data, dtype=np.float64), requires_grad=requires_grad, dtype=dtype
        )

    return make
