"""Uploads in, gradable folders out: find the engine files wherever a student put them.

An upload is a folder, a ``.zip``, or a single ``.py`` or ``.ipynb`` file, named by the
student's id (``alice.zip``, ``alice/``). ``prepare`` writes a folder with the layout the
grader expects (``micrograd/engine.py``, ``babygrad/{__init__,tensor,ops}.py``), containing
only the source files it chose, and notes saying where each came from.

Where the engines are looked for, in this order of precedence (within one rule the shallowest
path wins, then the alphabetically first):

micrograd
    1. a ``micrograd/engine.py`` (with the other ``.py`` files of that ``micrograd/`` folder);
    2. a file named ``engine.py``;
    3. a ``.py`` file with a top-level ``class Value``;
    4. a notebook (``.ipynb``) whose code cells define ``class Value`` (its definitions only).
    A single uploaded ``.py`` or ``.ipynb`` file is always the micrograd engine. For rules 2 to
    4 the ``.py`` files beside the engine come along into ``micrograd/``, so that an engine
    importing a helper (``from utils import RNG``) finds it as it does when the student runs
    it in its folder (the worker puts the engine's folder on ``sys.path``).
babygrad
    a ``babygrad/`` folder holding ``tensor.py`` and ``ops.py`` (with its other ``.py`` files).

Folders named ``__MACOSX``, ``__pycache__``, ``site-packages`` or starting with ``.`` are
ignored. Archives are read by a sandboxed worker (``grader.run.unpack``) under limits on
member count, unpacked bytes and CPU time; a member that escapes the folder, is absolute or is a
symbolic link gets the whole archive refused, and so does one that is not a valid zip (cut short
on its way up): its reports say once that the upload could not be read, and what to do
(``as_handed_in``), not that each assignment was not submitted. In a folder upload, symbolic
links and special files are skipped. An upload with nothing gradable is graded anyway (every
item 0, "missing"), with a note saying what was looked for.
"""

from __future__ import annotations

import ast
import base64
import binascii
import dataclasses
import hashlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.language.assignments import ASSIGNMENTS, Assignment
from grader.language.package import PackagedApi
from grader.language.parsing import parse
from grader.layout import SECRET, worker_readable
from grader.report.document import GradeReport
from grader.run import notebook
from grader.run.unpack import Refused, unsafe_path
from grader.sandbox.launch import Limits, WorkerFailure, worker_in_free_slot

SUFFIXES = (".py", ".ipynb")
KINDS = {".zip": "zip", ".py": "py", ".ipynb": "ipynb"}
IGNORED = frozenset({"__MACOSX", "__pycache__", "site-packages"})
THIS_COURSE = tuple(ASSIGNMENTS.values())
"""The assignments an upload is searched for unless a course names its own
(``Profile.graded``)."""
NOT_SIBLINGS = frozenset({"engine.py", "__init__.py"})
"""Files beside a found engine that are not carried: the engine's own name, and a package
``__init__`` that running the file in its folder would not execute either."""
UNPACK_LIMITS = Limits(
    memory_mb=1024, file_size_mb=1, processes=8, reply_bytes=32 * 1024 * 1024
)  # base64 of up to 16 MB of sources


@dataclass(frozen=True)
class UploadLimits:
    """How much of an upload is read; beyond that the upload is refused."""

    max_files: int = 5000  # archive members, or files walked in a folder
    max_bytes: int = 16 << 20  # total size of the source files read
    max_upload_bytes: int = 256 << 20  # size of an uploaded file (zip, py, ipynb)
    cpu_s: float = 30.0  # CPU budget of the sandboxed unpacker


@dataclass(frozen=True)
class Upload:
    """One student's upload: their id, where it is, and what it is."""

    student: str
    path: Path
    kind: str  # "folder" | "zip" | "py" | "ipynb" | "files"
    members: tuple[tuple[str, Path], ...] = ()
    """Of ``files``, an LMS export's loose files: each by the name the student gave it, and
    where it is."""


CANVAS = re.compile(r"(?P<name>[^_/]+?)(?:_LATE)?_(?P<id>\d+)_\d+_(?P<file>.+)")
"""Canvas's "Download Submissions": ``<name>[_LATE]_<user id>_<submission id>_<file>``, the
file's own name ending ``-1``, ``-2`` where the student handed it in again."""
MOODLE = re.compile(r"(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.*)")
"""Moodle's "Download all submissions": a folder ``<Full Name>_<id>_assignsubmission_file_``
per student (``..._onlinetext_`` holds the online text, not code), or with "flat files" each
file named so, with its own name after the last ``_``."""
RESUBMITTED = re.compile(r"-\d+(?=\.[^.]+$)")


REMEDY = {
    "zip": "zip your files again and upload the new zip, or upload the files themselves",
    "folder": "upload only your source files (.py, .ipynb)",
}
"""What a student does about an upload that could not be read: a zip, or any other kind."""
NOT_READ = "not graded (see the note on the upload)"
"""What a report says of each assignment of an upload that could not be read: the note on the
upload says why, and what to do, once."""


@dataclass
class Prepared:
    """A folder in the grader's layout, and what the instructor should know about it."""

    folder: Path
    notes: list[str] = field(default_factory=list)
    refused: str = ""
    """Why the upload was refused whole (then nothing was graded from it), else "": a
    gradebook's status says so rather than leave a bare 0."""


class DuplicateStudent(ValueError):
    """Two uploads carry the same student id (``alice.zip`` and ``alice/``)."""


def upload_at(path: Path, student: str | None = None) -> Upload | None:
    """``path`` as an upload named by its stem or ``student`` (a folder, ``.zip``, ``.py`` or
    ``.ipynb``, not a symbolic link; a folder holding one zip alone, as an LMS keeps a zip
    handed in, is that zip), or None."""
    if path.is_symlink():
        return None
    if path.is_dir():
        inside = [p for p in path.iterdir() if not _ignored(p.name)]
        (only,) = inside if len(inside) == 1 else (None,)
        if only and only.is_file() and not only.is_symlink() and only.suffix.lower() == ".zip":
            return Upload(student or path.name, only, "zip")
        return Upload(student or path.name, path, "folder")
    if path.is_file() and path.suffix.lower() in KINDS:
        return Upload(path.stem, path, KINDS[path.suffix.lower()])
    return None


def exported(entry: Path) -> tuple[str, str] | None:
    """``(student id, the file's own name)`` of an entry an LMS export named (Canvas's
    ``bobjones_1002_556_engine.py``: ``bobjones_1002``, ``engine.py``; Moodle's folder
    ``Alice Smith_1001_assignsubmission_file_``: ``Alice Smith_1001``, ""), else None."""
    moodle = MOODLE.fullmatch(entry.name)
    if moodle and (entry.is_dir() or moodle["file"]):
        return f"{moodle['name']}_{moodle['id']}", moodle["file"]
    canvas = CANVAS.fullmatch(entry.name)
    if canvas and entry.is_file():
        return f"{canvas['name']}_{canvas['id']}", RESUBMITTED.sub("", canvas["file"])
    return None


def _grouped(student: str, loose: list[tuple[str, Path]]) -> Upload:
    """One student's loose files from an export: a zip alone is that zip, else the files."""
    if len(loose) == 1 and loose[0][1].suffix.lower() == ".zip":
        return Upload(student, loose[0][1], "zip")
    return Upload(student, loose[0][1].parent, "files", tuple(sorted(loose)))


def discover(root: Path) -> tuple[list[Upload], list[str]]:
    """Every upload in ``root`` sorted by student id, and the names that are not uploads. An
    LMS export's entries (``exported``) are grouped by the student id in their names; a
    Moodle folder of online text holds no code and is left out."""
    uploads: dict[str, Upload] = {}
    loose: dict[str, list[tuple[str, Path]]] = {}
    ignored = []

    def add(upload: Upload, name: str) -> None:
        if upload.student in uploads:
            raise DuplicateStudent(
                f"two uploads for {upload.student!r}: "
                f"{uploads[upload.student].path.name} and {name}"
            )
        uploads[upload.student] = upload

    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or entry.name in IGNORED or entry.is_symlink():
            continue
        export = exported(entry)
        if export is not None and entry.is_dir():
            if "_assignsubmission_file_" in entry.name and (upload := upload_at(entry, export[0])):
                add(upload, entry.name)
            else:
                ignored.append(entry.name)
        elif export is not None and Path(export[1]).suffix.lower() in (*SUFFIXES, ".zip"):
            loose.setdefault(export[0], []).append((export[1], entry))
        elif export is None and (upload := upload_at(entry)) is not None:
            add(upload, entry.name)
        else:
            ignored.append(entry.name)
    for student, files in loose.items():
        add(_grouped(student, files), files[0][1].name)
    return [uploads[s] for s in sorted(uploads)], ignored


def content_hash(upload: Upload) -> str:
    """sha256 of what was uploaded: the file, or every name and file of the folder."""
    digest = hashlib.sha256(f"{upload.kind}\0".encode())
    if upload.kind == "files":
        for name, path in upload.members:
            digest.update(f"{name}\0".encode())
            _hash_file(digest, path)
        return digest.hexdigest()
    if upload.kind != "folder":
        _hash_file(digest, upload.path)
        return digest.hexdigest()
    for path in sorted(_walk(upload.path)):
        info = path.lstat()
        digest.update(
            f"{path.relative_to(upload.path).as_posix()}\0{stat.S_IFMT(info.st_mode)}\0".encode()
        )
        if stat.S_ISREG(info.st_mode):
            _hash_file(digest, path)
        elif stat.S_ISLNK(info.st_mode):
            digest.update(os.readlink(path).encode(errors="surrogateescape"))
    return digest.hexdigest()


def _hash_file(digest: hashlib._Hash, path: Path) -> None:
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)


def _walk(root: Path) -> Iterator[Path]:
    """Every entry below ``root``, not following symbolic links, skipping ignored folders."""
    for directory, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if not _ignored(f))
        for name in [*folders, *sorted(files)]:
            yield Path(directory) / name


def _ignored(name: str) -> bool:
    return name.startswith(".") or name in IGNORED


# --------------------------------------------------------------------------- reading sources


def folder_sources(root: Path, limits: UploadLimits) -> tuple[dict[str, bytes], list[str]]:
    """The ``.py`` and ``.ipynb`` files below ``root`` (regular files only), and notes."""
    found: dict[str, bytes] = {}
    notes: list[str] = []
    total = count = 0
    for path in _walk(root):
        count += 1
        if count > limits.max_files:
            raise Refused(f"the upload has more than {limits.max_files} files")
        info = path.lstat()
        relative = path.relative_to(root).as_posix()
        if not path.name.lower().endswith(SUFFIXES) or stat.S_ISDIR(info.st_mode):
            continue
        if not stat.S_ISREG(info.st_mode):
            notes.append(f"skipped {relative}: not a regular file (a symbolic link?)")
            continue
        total += info.st_size
        if total > limits.max_bytes:
            raise Refused(f"the upload's source files exceed {limits.max_bytes >> 20} MB")
        found[relative] = _read_regular(path)
    return found, notes


def member_sources(members: tuple[tuple[str, Path], ...], limits: UploadLimits) -> dict[str, bytes]:
    """An export's loose files by the names the student gave them, within ``limits``."""
    if sum(path.stat().st_size for _, path in members) > limits.max_bytes:
        raise Refused(f"the upload's source files exceed {limits.max_bytes >> 20} MB")
    return {name: _read_regular(path) for name, path in members if name.endswith(SUFFIXES)}


def _read_regular(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def archive_sources(
    archive: Path, limits: UploadLimits, *, sandbox: str = "auto", slot: int = 0
) -> dict[str, bytes]:
    """The ``.py`` and ``.ipynb`` members of a zip, read by the sandboxed unpacker."""
    worker = worker_in_free_slot(
        [sys.executable, "-I", "-m", "grader.run.unpack"],
        first_slot=slot,
        submission=archive,
        readable=worker_readable(),
        hidden=SECRET,
        limits=UNPACK_LIMITS,
        sandbox=sandbox,
    )
    with worker:
        try:
            reply = worker.request(
                {
                    "max_files": limits.max_files,
                    "max_bytes": limits.max_bytes,
                    "suffixes": list(SUFFIXES),
                },
                limits.cpu_s,
            )
        except WorkerFailure as failure:
            raise Refused(
                f"the archive could not be read ({failure.kind}: {failure.detail})"
            ) from None
    return _checked_reply(reply, limits)


def _checked_reply(reply: object, limits: UploadLimits) -> dict[str, bytes]:
    """The unpacker's answer, trusted no further than its checks."""
    if isinstance(reply, dict) and set(reply) == {"refused"} and isinstance(reply["refused"], str):
        raise Refused(reply["refused"][:300])
    if not (
        isinstance(reply, dict)
        and set(reply) == {"files"}
        and isinstance(reply["files"], dict)
        and len(reply["files"]) <= limits.max_files
    ):
        raise Refused("the unpacker gave an invalid answer")
    files: dict[str, bytes] = {}
    total = 0
    for name, data in reply["files"].items():
        if not isinstance(name, str) or not isinstance(data, str) or unsafe_path(name):
            raise Refused("the unpacker gave an invalid answer")
        try:
            files[name] = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise Refused("the unpacker gave an invalid answer") from None
        total += len(files[name])
    if total > limits.max_bytes:
        raise Refused("the unpacker gave an invalid answer")
    return files


# --------------------------------------------------------------------------- choosing


def _depth_then_name(path: str) -> tuple[int, str]:
    return len(PurePosixPath(path).parts), path


def _usable(path: str) -> bool:
    return not any(_ignored(part) for part in PurePosixPath(path).parts[:-1])


def choose_micrograd(files: dict[str, bytes]) -> tuple[str, str] | None:
    """``(rule, path)`` of the micrograd engine by the documented precedence, or None."""
    paths = sorted((p for p in files if _usable(p)), key=_depth_then_name)
    rules = [
        (
            "package",
            lambda p: (
                p.endswith("micrograd/engine.py") and PurePosixPath(p).parent.name == "micrograd"
            ),
        ),
        ("file", lambda p: PurePosixPath(p).name == "engine.py"),
        (
            "file",
            lambda p: (
                p.endswith(".py")
                and bool(notebook.DEFINES_VALUE.search(files[p].decode(errors="replace")))
            ),
        ),
        ("notebook", lambda p: p.endswith(".ipynb") and _notebook_defines_value(files[p])),
    ]
    for rule, matches in rules:
        for path in paths:
            if matches(path):
                return rule, path
    return None


def _notebook_defines_value(data: bytes) -> bool:
    try:
        return notebook.defines_value(data.decode(errors="replace"))
    except notebook.NotebookError:
        return False


def choose_package(files: dict[str, bytes], api: PackagedApi) -> str | None:
    """The folder of a tensor course's package (``.../babygrad``, ``.../needle``, or one of
    its ``aliases``: ``.../baby``) that holds the files it needs, the shallowest first; or
    None."""
    folders = sorted(
        {
            str(folder)
            for p in files
            if _usable(p)
            for folder in PurePosixPath(p).parents  # files may sit below it (core/tensor.py)
            if folder.name in api.names
        },
        key=_depth_then_name,
    )
    return next((f for f in folders if all(f"{f}/{name}" in files for name in api.files)), None)


TENSOR_CODE = frozenset({"Tensor", "Function", "TensorOp"})
"""Classes, or the bases of classes, that make a loose file a tensor course's."""


def _tensor_code(data: bytes) -> bool | None:
    """Whether a file defines a ``Tensor`` or an op class at its top level, read by ``ast``
    (never run); None where it does not parse (its import will say why)."""
    try:
        tree = parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return any(
        isinstance(node, ast.ClassDef)
        and (
            node.name in TENSOR_CODE
            or any(ast.unparse(base).rsplit(".", 1)[-1] in TENSOR_CODE for base in node.bases)
        )
        for node in tree.body
    )


def choose_loose(files: dict[str, bytes], api: PackagedApi) -> str | None:
    """The folder ("" the top) holding a tensor course's files loose, without the package's
    folder (dragged into Gradescope one by one, or exported by an LMS), each defining a
    ``Tensor`` or ops; or None."""
    if any("/" in name for name in api.files):
        return None
    folders = sorted(
        {str(PurePosixPath(p).parent) for p in files if _usable(p)}, key=_depth_then_name
    )
    for folder in folders:
        paths = [str(PurePosixPath(folder, name)) for name in api.files]
        if all(p in files and _tensor_code(files[p]) is not False for p in paths):
            return "" if folder == "." else folder
    return None


def _place_loose(files: dict[str, bytes], folder: str, api: PackagedApi, dest: Path) -> None:
    """The loose files into the package's folder, with an ``__init__`` importing the first
    one where the upload has none (the package's own ``__init__`` exports it)."""
    for name in api.files:
        _write(dest / api.folder / api.package, name, files[str(PurePosixPath(folder, name))])
    init = str(PurePosixPath(folder, "__init__.py"))
    if init in files:
        _write(dest / api.folder / api.package, "__init__.py", files[init])
    elif api.init:
        first = PurePosixPath(api.files[0]).stem
        _write(
            dest / api.folder / api.package,
            "__init__.py",
            f"from .{first} import *  # noqa: F403 (written by the grader)\n".encode(),
        )


# --------------------------------------------------------------------------- writing


def _write(root: Path, relative: str, data: bytes) -> None:
    if unsafe_path(relative):
        raise Refused(f"refusing to write {relative!r}")
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _copy_package(files: dict[str, bytes], folder: str, name: str, dest: Path) -> None:
    """Every ``.py`` file below ``folder`` into ``dest/name``, keeping sub-folders."""
    for path, data in files.items():
        if path.endswith(".py") and path.startswith(folder + "/") and _usable(path):
            _write(dest / name, path[len(folder) + 1 :], data)


def _siblings(files: dict[str, bytes], path: str) -> list[str]:
    """The ``.py`` files in the same folder as ``path`` that come along with it."""
    folder = PurePosixPath(path).parent
    return sorted(
        p
        for p in files
        if p != path
        and p.endswith(".py")
        and _usable(p)
        and PurePosixPath(p).parent == folder
        and PurePosixPath(p).name not in NOT_SIBLINGS
    )


def _place_micrograd(files: dict[str, bytes], rule: str, path: str, dest: Path) -> list[str]:
    if rule == "package":
        _copy_package(files, str(PurePosixPath(path).parent), "micrograd", dest)
        return [f"micrograd: {path}"]
    if rule == "file":
        engine, notes = files[path], [f"micrograd: {path}"]
    else:
        try:
            source, notes = notebook.definitions(files[path].decode(errors="replace"))
        except notebook.NotebookError as exc:
            return [f"micrograd: {path} is unreadable ({exc})"]
        engine, notes = source.encode(), [f"micrograd: definitions of the notebook {path}", *notes]
    _write(dest, "micrograd/engine.py", engine)
    siblings = _siblings(files, path)
    for sibling in siblings:
        _write(dest, f"micrograd/{PurePosixPath(sibling).name}", files[sibling])
    if siblings:
        notes.insert(
            1,
            "micrograd: with the files beside it: "
            + ", ".join(PurePosixPath(p).name for p in siblings),
        )
    return notes


def place(
    files: dict[str, bytes],
    dest: Path,
    assignments: tuple[Assignment, ...] = THIS_COURSE,
    *,
    single: str | None = None,
) -> list[str]:
    """Write the chosen engines of ``assignments`` into ``dest``; notes on what was found.
    ``single``: the kind of a one-file upload ("py" or "ipynb"), whose only file is the
    scalar engine."""
    scalar = any(a.kind == "scalar" and a.package is None for a in assignments)
    if single is not None and scalar:
        (path,) = files
        return _place_micrograd(files, "file" if single == "py" else "notebook", path, dest)
    notes = []
    micrograd = choose_micrograd(files) if scalar and single is None else None
    if micrograd is not None:
        notes += _place_micrograd(files, *micrograd, dest)
    placed = micrograd is not None
    for packaged in (a for a in assignments if a.package is not None and single is None):
        folder = choose_package(files, packaged.package)
        loose = None if folder is not None else choose_loose(files, packaged.package)
        if folder is not None:
            # Under the name it has: its own modules may import it by that name.
            name = PurePosixPath(folder).name
            _copy_package(files, folder, str(PurePosixPath(packaged.folder).parent / name), dest)
            notes.append(f"{packaged.name}: {folder}/")
        elif loose is not None:
            _place_loose(files, loose, packaged.package, dest)
            where = ", ".join(str(PurePosixPath(loose, n)) for n in packaged.package.files)
            notes.append(f"{packaged.name}: {where} (loose files, placed as {packaged.folder}/)")
        placed = placed or folder is not None or loose is not None
    if not placed:
        notes.append(
            "nothing gradable: looked for " + "; and for ".join(a.looked_for for a in assignments)
        )
    return notes


def prepare(
    upload: Upload,
    dest: Path,
    assignments: tuple[Assignment, ...] = THIS_COURSE,
    *,
    limits: UploadLimits = UploadLimits(),
    sandbox: str = "auto",
    slot: int = 0,
) -> Prepared:
    """Read ``upload`` within ``limits`` and write the gradable folder ``dest``, with the
    engines of ``assignments`` (the graded course's) that it holds."""
    dest.mkdir(parents=True, exist_ok=True)
    prepared = Prepared(dest)
    try:
        if upload.kind != "folder" and upload.path.stat().st_size > limits.max_upload_bytes:
            raise Refused(f"the upload exceeds {limits.max_upload_bytes >> 20} MB")
        if upload.kind == "folder":
            files, prepared.notes = folder_sources(upload.path, limits)
        elif upload.kind == "files":
            files = member_sources(upload.members, limits)
        elif upload.kind == "zip":
            files = archive_sources(upload.path, limits, sandbox=sandbox, slot=slot)
        else:
            files = {upload.path.name: upload.path.read_bytes()}
    except Refused as exc:
        prepared.refused = str(exc)
        prepared.notes.append(unread(upload, str(exc)))
        return prepared
    single = upload.kind if upload.kind in ("py", "ipynb") else None
    prepared.notes += place(files, dest, assignments, single=single)
    return prepared


def unread(upload: Upload, why: str) -> str:
    """The one note on an upload that could not be read (``Refused``): why, and what to do."""
    remedy = REMEDY["zip" if upload.kind == "zip" else "folder"]
    return f"could not be read: {why}. Nothing was graded from it: {remedy}."


def as_handed_in(
    report: GradeReport, found: Prepared, assignments: Sequence[Assignment]
) -> GradeReport:
    """``report`` of the prepared upload ``found`` (its folder still there) as its student
    reads it, in every workflow (grade, batch, Gradescope): for an upload that could not be
    read, each assignment ``NOT_READ`` instead of "not submitted", whose note says why once;
    for a notebook's engine, snippets the notebook runs (``notebook.report_for_notebook``)."""
    if found.refused:
        return dataclasses.replace(
            report,
            items=[{**item, "feedback": "", "reason": NOT_READ} for item in report.items],
            not_submitted=dict.fromkeys(report.not_submitted, NOT_READ),
        )
    return notebook.report_for_notebook(report, found.folder, assignments)


@contextmanager
def prepared(
    upload: Upload,
    assignments: tuple[Assignment, ...] = THIS_COURSE,
    *,
    sandbox: str = "auto",
    slot: int = 0,
) -> Iterator[Prepared]:
    """``upload`` prepared in a private temporary folder, deleted when the block ends."""
    with tempfile.TemporaryDirectory(prefix="grader-upload-") as tmp:
        yield prepare(upload, Path(tmp) / "submission", assignments, sandbox=sandbox, slot=slot)


# --------------------------------------------------------------------------- prepared folders


def submitted(folder: Path, assignment: Assignment) -> bool:
    """Whether the prepared ``folder`` holds ``assignment``'s files (else no worker starts)."""
    return all((folder / name).is_file() for name in assignment.found_in(folder).layout)


def not_submitted(assignment: Assignment) -> str:
    """What the reports say, once, for an assignment with nothing to grade."""
    return f"not submitted (looked for {assignment.looked_for})"


def fingerprints(
    folder: Path, assignments: tuple[Assignment, ...] = THIS_COURSE
) -> dict[str, str | None]:
    """Each assignment's prepared files as a hash (None: not submitted); ``watch`` re-grades
    an assignment when its hash changes, whatever file of the upload was saved."""
    return {
        a.name: content_hash(Upload(a.name, folder / a.found_in(folder).folder, "folder"))
        if submitted(folder, a)
        else None
        for a in assignments
    }
