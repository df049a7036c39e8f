"""The ledger's key and entries, without grading: every field of the key changes the digest,
and an entry is only ever read back under the key it was written with (the batch tests grade
classes to show the same end to end, and are slow)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from grader.batch.ledger import SCHEMA, Key, Ledger

KEY = Key(
    content="c0ffee",
    rubric="r1",
    seed=7,
    assignment="micrograd",
    only=("micrograd.ops.add",),
    grader="g1",
    reference="ref1",
    oracles=("reference",),
    libraries=("hypothesis 6", "numpy 2", "python 3.11"),
    limits=(30.0, 2048),
)
CHANGED = {
    "content": "c0ffef",
    "rubric": "r2",
    "seed": 8,
    "assignment": "babygrad",
    "only": ("micrograd.ops.add", "micrograd.ops.mul"),
    "grader": "g2",
    "reference": None,
    "oracles": ("reference", "pytorch 2.4.1"),
    "libraries": ("hypothesis 6", "numpy 1", "python 3.11"),
    "limits": (30.0, 1024),
}


def test_every_field_of_the_key_changes_its_digest():
    assert set(CHANGED) == {f.name for f in dataclasses.fields(Key)}
    digests = {KEY.digest} | {dataclasses.replace(KEY, **{k: v}).digest for k, v in CHANGED.items()}
    assert len(digests) == 1 + len(CHANGED)
    assert KEY.digest == dataclasses.replace(KEY).digest  # the same input, the same key


def test_an_entry_is_read_back_under_its_own_key_only(tmp_path: Path):
    ledger = Ledger(tmp_path)
    assert ledger.get(KEY) is None
    ledger.put(KEY, {"student": "alice", "score": 3.5})
    path = tmp_path / f"{KEY.digest}.json"
    assert json.loads(path.read_text()) == {
        "schema": SCHEMA,
        "key": KEY.digest,
        "student": "alice",
        "score": 3.5,
    }
    assert ledger.get(KEY) == {
        "schema": SCHEMA,
        "key": KEY.digest,
        "student": "alice",
        "score": 3.5,
    }
    assert ledger.get(dataclasses.replace(KEY, seed=8)) is None


@pytest.mark.parametrize(
    "stored",
    [
        "not json",
        json.dumps(["a list"]),
        json.dumps({"schema": SCHEMA + 1, "key": KEY.digest}),
        json.dumps({"key": KEY.digest}),
        json.dumps({"schema": SCHEMA, "key": "another key"}),
        json.dumps({"schema": SCHEMA}),
    ],
)
def test_a_foreign_or_unreadable_entry_is_no_entry(tmp_path: Path, stored: str):
    (tmp_path / f"{KEY.digest}.json").write_text(stored)
    assert Ledger(tmp_path).get(KEY) is None
