"""Finding engines in uploads, safe unpacking of hostile zips, notebooks reduced to definitions."""

from __future__ import annotations

import ast
import base64
import json
import stat
import zipfile
from pathlib import Path

import pytest

from grader.language import profiles
from grader.language.assignments import BABYGRAD, MICROGRAD
from grader.language.tensor_api import BABYGRAD_API
from grader.layout import COURSES
from grader.run import notebook, submissions
from grader.run.submissions import Refused, Upload, UploadLimits, prepare

SLOT = 200
ENGINE = "import math\n\nclass Value:\n    pass\n"


def make(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def placed(folder: Path) -> list[str]:
    """The files of a prepared folder, relative to it."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def zipped(path: Path, members: dict[str, str | zipfile.ZipInfo]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def nb(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [{"cell_type": "code", "source": c} for c in cells],
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
        }
    )


def found(files: dict[str, str]) -> tuple[str, str] | None:
    return submissions.choose_micrograd({k: v.encode() for k, v in files.items()})


def test_discover_names_students_and_refuses_duplicates(tmp_path):
    make(
        tmp_path,
        {
            "alice/engine.py": "",
            "bob.zip": "",
            "carol.py": "",
            "dan.ipynb": "",
            "notes.txt": "",
            ".DS_Store": "",
        },
    )
    uploads, ignored = submissions.discover(tmp_path)
    assert [(u.student, u.kind) for u in uploads] == [
        ("alice", "folder"),
        ("bob", "zip"),
        ("carol", "py"),
        ("dan", "ipynb"),
    ]
    assert ignored == ["notes.txt"]
    make(tmp_path, {"alice.py": ""})
    with pytest.raises(submissions.DuplicateStudent, match="alice"):
        submissions.discover(tmp_path)


def test_a_path_is_an_upload_by_its_kind(tmp_path):
    make(tmp_path, {"hw/engine.py": "", "a.ZIP": "", "b.py": "", "c.ipynb": "", "d.txt": ""})
    (tmp_path / "link").symlink_to(tmp_path / "hw")
    kinds = {
        name: getattr(submissions.upload_at(tmp_path / name), "kind", None)
        for name in ("hw", "a.ZIP", "b.py", "c.ipynb", "d.txt", "link", "nowhere")
    }
    assert kinds == {
        "hw": "folder",
        "a.ZIP": "zip",
        "b.py": "py",
        "c.ipynb": "ipynb",
        "d.txt": None,
        "link": None,
        "nowhere": None,
    }


def test_precedence_of_micrograd_candidates():
    everything = {
        "a/b/c/micrograd/engine.py": ENGINE,
        "engine.py": ENGINE,
        "x/value.py": ENGINE,
        "nb.ipynb": nb(ENGINE),
    }
    assert found(everything) == ("package", "a/b/c/micrograd/engine.py")
    del everything["a/b/c/micrograd/engine.py"]
    assert found(everything) == ("file", "engine.py")
    del everything["engine.py"]
    assert found(everything) == ("file", "x/value.py")
    del everything["x/value.py"]
    assert found(everything) == ("notebook", "nb.ipynb")
    assert found({"nb.ipynb": nb("x = 1"), "y.py": "class Valued: pass"}) is None


def test_shallowest_then_alphabetical_and_junk_folders_ignored():
    assert found({"b/engine.py": "", "a/engine.py": "", "a/b/engine.py": ""}) == (
        "file",
        "a/engine.py",
    )
    assert found({"__MACOSX/engine.py": "", ".git/engine.py": "", "z/q/engine.py": ""}) == (
        "file",
        "z/q/engine.py",
    )


def test_babygrad_needs_tensor_and_ops():
    files = {
        "hw/babygrad/tensor.py": b"",
        "hw/babygrad/__init__.py": b"",
        "deep/er/babygrad/tensor.py": b"",
        "deep/er/babygrad/ops.py": b"",
    }
    assert submissions.choose_package(files, BABYGRAD_API) == "deep/er/babygrad"
    files["hw/babygrad/ops.py"] = b""
    assert submissions.choose_package(files, BABYGRAD_API) == "hw/babygrad"


def test_prepare_a_nested_folder_into_the_grader_layout(tmp_path):
    upload = make(
        tmp_path / "alice",
        {
            "hw/x/micrograd/engine.py": ENGINE,
            "hw/x/micrograd/__init__.py": "",
            "hw/x/micrograd/nn.py": "",
            "hw/x/micrograd/data.csv": "1,2",
            "src/babygrad/tensor.py": "",
            "src/babygrad/ops.py": "",
            "src/babygrad/__init__.py": "",
        },
    )
    prepared = prepare(Upload("alice", upload, "folder"), tmp_path / "out")
    files = placed(prepared.folder)
    assert files == [
        "babygrad/__init__.py",
        "babygrad/ops.py",
        "babygrad/tensor.py",
        "micrograd/__init__.py",
        "micrograd/engine.py",
        "micrograd/nn.py",
    ]
    assert prepared.notes == ["micrograd: hw/x/micrograd/engine.py", "babygrad: src/babygrad/"]


@pytest.mark.parametrize(
    "engine, note",
    [
        ("hw/engine.py", "micrograd: hw/engine.py"),
        ("hw/mine.py", "micrograd: hw/mine.py"),
        ("hw/lecture.ipynb", "micrograd: definitions of the notebook hw/lecture.ipynb"),
    ],
)
def test_the_files_beside_a_found_engine_come_along(tmp_path, engine, note):
    text = nb(ENGINE) if engine.endswith(".ipynb") else ENGINE
    upload = make(
        tmp_path / "alice",
        {
            engine: text,
            "hw/utils.py": "RNG = 1",
            "hw/__init__.py": "raise SystemExit",
            "hw/data/loader.py": "",
            "hw/notes.txt": "",
            "other/helpers.py": "",
        },
    )
    prepared = prepare(Upload("alice", upload, "folder"), tmp_path / "out")
    files = placed(prepared.folder)
    assert files == ["micrograd/engine.py", "micrograd/utils.py"]
    assert prepared.notes == [note, "micrograd: with the files beside it: utils.py"]


def test_what_a_prepared_folder_holds(tmp_path):
    folder = make(tmp_path, {"micrograd/engine.py": ENGINE, "babygrad/tensor.py": ""})
    assert submissions.submitted(folder, MICROGRAD)
    assert not submissions.submitted(folder, BABYGRAD)
    first = submissions.fingerprints(folder)
    assert first["babygrad"] is None and first["micrograd"]
    make(folder, {"babygrad/ops.py": "", "notes.txt": "ignored"})
    second = submissions.fingerprints(folder)
    assert second["micrograd"] == first["micrograd"] and second["babygrad"]
    assert submissions.not_submitted(BABYGRAD) == (
        "not submitted (looked for a babygrad/ folder with tensor.py and ops.py)"
    )


NEEDLE = profiles.load(COURSES / "needle-hw1" / "profile.yaml").graded


def test_another_courses_package_is_found_where_it_is_and_placed_where_its_api_imports_it(
    tmp_path,
):
    upload = make(
        tmp_path / "upload",
        {
            "hw1/python/needle/__init__.py": "",
            "hw1/python/needle/autograd.py": "",
            "hw1/python/needle/ops/ops_mathematic.py": "",
            "hw1/tests/test_autograd_hw.py": "",
            "scratch/engine.py": ENGINE,
        },
    )
    prepared = prepare(Upload("alice", upload, "folder"), tmp_path / "out", NEEDLE)
    files = placed(prepared.folder)
    assert files == [
        "python/needle/__init__.py",
        "python/needle/autograd.py",
        "python/needle/ops/ops_mathematic.py",
    ]
    assert prepared.notes == ["needle: hw1/python/needle/"]
    assert submissions.fingerprints(prepared.folder, NEEDLE)["needle"]


def test_an_upload_without_the_courses_package_says_where_it_was_looked_for(tmp_path):
    upload = make(tmp_path / "upload", {"engine.py": ENGINE, "needle/ops.py": ""})
    prepared = prepare(Upload("alice", upload, "folder"), tmp_path / "out", NEEDLE)
    assert prepared.notes == [
        "nothing gradable: looked for a needle/ folder with __init__.py and autograd.py"
        " (in python/)"
    ]
    assert not submissions.submitted(prepared.folder, NEEDLE[0])


def test_a_prepared_upload_is_deleted_after_use(tmp_path):
    (tmp_path / "a.py").write_text(ENGINE)
    with submissions.prepared(Upload("a", tmp_path / "a.py", "py")) as found:
        assert (found.folder / "micrograd" / "engine.py").read_text() == ENGINE
    assert not found.folder.exists()


def test_a_symlinked_engine_in_a_folder_is_skipped(tmp_path):
    (tmp_path / "mallory").mkdir()
    (tmp_path / "mallory" / "engine.py").symlink_to("/etc/passwd")
    prepared = prepare(Upload("mallory", tmp_path / "mallory", "folder"), tmp_path / "out")
    assert not any(prepared.folder.rglob("*.py"))
    assert any("not a regular file" in n for n in prepared.notes)
    assert any("nothing gradable" in n for n in prepared.notes)


def test_single_files_are_the_micrograd_engine(tmp_path):
    (tmp_path / "a.py").write_text("print('no Value here')\n")
    prepared = prepare(Upload("a", tmp_path / "a.py", "py"), tmp_path / "out")
    assert (prepared.folder / "micrograd" / "engine.py").read_text() == ("print('no Value here')\n")


def test_a_zip_is_read_in_the_sandbox(tmp_path):
    archive = zipped(
        tmp_path / "bob.zip",
        {
            "w/micrograd/engine.py": ENGINE,
            "w/big.bin": "0" * (30 << 20),
            "w/babygrad/ops.py": "x = 1",
        },
    )
    prepared = prepare(Upload("bob", archive, "zip"), tmp_path / "out", slot=SLOT)
    assert (prepared.folder / "micrograd" / "engine.py").read_text() == ENGINE
    assert prepared.notes == ["micrograd: w/micrograd/engine.py"]


def _link() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("engine.py")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize(
    "members, why",
    [
        ({"../../evil.py": "x"}, "escapes the folder"),
        ({"/etc/evil.py": "x"}, "absolute path"),
        ({"a\\..\\..\\evil.py": "x"}, "escapes the folder"),
        ({_link(): "/etc/passwd"}, "symbolic link"),
        ({"bomb.py": "0" * (20 << 20)}, "more than the limit"),
        ({f"f{n}.txt": "" for n in range(60)}, "more than the limit of 50"),
    ],
)
def test_hostile_archives_are_refused_whole(tmp_path, members, why):
    archive = tmp_path / "m.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.writestr("micrograd/engine.py", ENGINE)
        for member, text in members.items():
            handle.writestr(member, text)
    limits = UploadLimits(max_files=50)
    prepared = prepare(Upload("m", archive, "zip"), tmp_path / "out", limits=limits, slot=SLOT)
    assert not any(prepared.folder.rglob("*"))
    assert len(prepared.notes) == 1 and why in prepared.notes[0], prepared.notes


def test_not_a_zip(tmp_path):
    (tmp_path / "x.zip").write_text("hello")
    prepared = prepare(Upload("x", tmp_path / "x.zip", "zip"), tmp_path / "out", slot=SLOT)
    assert "not a valid zip archive" in prepared.notes[0]


@pytest.mark.parametrize(
    "reply",
    [
        {"files": {"../x.py": base64.b64encode(b"x").decode()}},
        {"files": {"x.py": "not base64!"}},
        {"files": {"x.py": 3}},
        {"files": {}, "extra": 1},
        ["files"],
    ],
)
def test_the_unpackers_answer_is_checked(reply):
    with pytest.raises(Refused):
        submissions._checked_reply(reply, UploadLimits())


def test_content_hash_follows_content_and_kind(tmp_path):
    folder = make(tmp_path / "s", {"micrograd/engine.py": ENGINE})
    upload = Upload("s", folder, "folder")
    first = submissions.content_hash(upload)
    assert submissions.content_hash(upload) == first
    (folder / "micrograd" / "engine.py").write_text(ENGINE + "\n")
    assert submissions.content_hash(upload) != first
    (tmp_path / "f.py").write_text(ENGINE)
    assert submissions.content_hash(
        Upload("f", tmp_path / "f.py", "py")
    ) != submissions.content_hash(Upload("f", tmp_path / "f.py", "ipynb"))


def test_a_notebook_keeps_definitions_only_and_runs_nothing():
    text = nb(
        "%matplotlib inline\nimport matplotlib_not_installed as plt\nimport math",
        "from __future__ import annotations\nclass Value:\n    version = 1",
        "open('/tmp/pwned', 'w')\nwhile True:\n    pass",
        "def broken(:",
        "!pip install torch\nEPS = 1e-6\nlabel = f(3)\n@staticmethod\ndef helper():\n    return 2",
        "class Value:\n    version = 2",
    )
    source, notes = notebook.definitions(text)
    assert notes == ["code cell 4 skipped: it does not parse (SyntaxError)"]
    assert "pwned" not in source and "while" not in source and "label" not in source
    assert source.index("from __future__") < source.index("import math")
    namespace: dict = {}
    exec(compile(ast.parse(source), "engine.py", "exec"), namespace)  # our own generated text
    assert namespace["Value"].version == 2 and namespace["EPS"] == 1e-6
    assert namespace["helper"].__func__() == 2 and "plt" not in namespace


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"cells": 3}', "[" * 100000])
def test_unreadable_notebooks(text):
    with pytest.raises(notebook.NotebookError):
        notebook.code_cells(text)


def test_lms_exports_are_grouped_per_student_with_the_id_from_their_names(tmp_path):
    """Canvas's and Moodle's "download all submissions", as they name what they export."""
    make(
        tmp_path,
        {
            "bobjones_1002_556_engine.py": ENGINE,
            "bobjones_1002_557_tensor.py": "",
            "bobjones_1002_558_ops.py": "",
            "carolwu_LATE_1003_601_homework-1.zip": "",
            "danlee_1004_602_report.pdf": "",
            "Alice Smith_1001_assignsubmission_file_/micrograd/engine.py": ENGINE,
            "Alice Smith_1001_assignsubmission_onlinetext_/onlinetext.html": "<p>hi</p>",
            "Gus Ng_1006_assignsubmission_file_/hw2.zip": "",
            "Eve O'Neil_1005_assignsubmission_file_engine.py": ENGINE,
            "frank/engine.py": ENGINE,
        },
    )
    uploads, ignored = submissions.discover(tmp_path)
    assert [(u.student, u.kind) for u in uploads] == [
        ("Alice Smith_1001", "folder"),
        ("Eve O'Neil_1005", "files"),
        ("Gus Ng_1006", "zip"),  # a zip handed in to Moodle: that zip
        ("bobjones_1002", "files"),
        ("carolwu_1003", "zip"),
        ("frank", "folder"),
    ]
    bob = uploads[3]
    assert [name for name, _ in bob.members] == ["engine.py", "ops.py", "tensor.py"]
    assert ignored == [
        "Alice Smith_1001_assignsubmission_onlinetext_",
        "danlee_1004_602_report.pdf",
    ]
    assert submissions.content_hash(bob) != submissions.content_hash(uploads[1])


def test_loose_files_are_placed_by_what_they_define(tmp_path):
    """Files dragged into Gradescope without their folders: the one defining ``Value`` is
    micrograd's engine, ``tensor.py`` and ``ops.py`` defining a ``Tensor`` and ops are
    babygrad's; a helper named ``tensor.py`` defining neither is not."""
    babygrad = {
        "tensor.py": "import numpy as np\nclass Tensor:\n    pass\nfrom . import ops\n",
        "ops.py": "from .tensor import Tensor\nclass Function:\n    pass\n"
        "class Add(Function):\n    pass\n",
    }
    upload = make(tmp_path / "dana", {"engine.py": ENGINE, **babygrad})
    prepared = prepare(Upload("dana", upload, "folder"), tmp_path / "out", slot=SLOT)
    assert placed(prepared.folder) == [
        "babygrad/__init__.py",
        "babygrad/ops.py",
        "babygrad/tensor.py",
        "micrograd/engine.py",
        "micrograd/ops.py",
        "micrograd/tensor.py",
    ]
    assert "babygrad: tensor.py, ops.py (loose files, placed as babygrad/)" in prepared.notes
    assert "import *" in (prepared.folder / "babygrad/__init__.py").read_text()
    helper = make(tmp_path / "erin", {"engine.py": ENGINE, "tensor.py": "X = 1", "ops.py": ""})
    prepared = prepare(Upload("erin", helper, "folder"), tmp_path / "out2", slot=SLOT)
    assert not (prepared.folder / "babygrad").exists()
    syntax = make(tmp_path / "finn", {**babygrad, "ops.py": "class Add(Function)\n"})
    prepared = prepare(Upload("finn", syntax, "folder"), tmp_path / "out3", slot=SLOT)
    assert (prepared.folder / "babygrad" / "ops.py").read_text() == "class Add(Function)\n"
