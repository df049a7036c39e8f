"""Read the source files out of an uploaded zip: runs inside the sandbox, never in the grader.

An upload is hostile input: a zip bomb, a member named ``../../x`` or ``/etc/x``, a symbolic
link. This program is started by ``submissions.unpack_archive`` as a sandboxed worker (own
uid, no network, memory, file-size and CPU limits), so a bug in ``zipfile`` or a bomb costs
that process only. It answers one request (fds 3 and 4, ``framing``) with the ``.py`` and
``.ipynb`` members as base64, after checking every member; other members are never
decompressed. The parent checks the answer again before it writes anything.
"""

from __future__ import annotations

import base64
import os
import stat
import zipfile
from pathlib import PurePosixPath
from typing import Any

from grader.sandbox import framing

CHUNK = 1 << 16


class Refused(Exception):
    """The archive breaks a rule; the message says which, for the instructor and student."""


def unsafe_path(name: str) -> str:
    """Why a member name may not be written below the folder, or "" when it may."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or (path.parts and ":" in path.parts[0]):
        return "is an absolute path"
    if ".." in path.parts:
        return "escapes the folder (..)"
    if any(ord(ch) < 32 for ch in name):
        return "has a control character in its name"
    return ""


def _check(info: zipfile.ZipInfo) -> None:
    why = unsafe_path(info.filename)
    if why:
        raise Refused(f"member {info.filename[:100]!r} {why}")
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        raise Refused(f"member {info.filename[:100]!r} is a symbolic link")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise Refused(f"member {info.filename[:100]!r} is not a regular file")


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    """The member's bytes, counting what is actually decompressed (not the declared size)."""
    data = bytearray()
    with archive.open(info) as member:
        while chunk := member.read(CHUNK):
            data += chunk
            if len(data) > budget:
                raise Refused(
                    f"the archive unpacks to more than the limit of "
                    f"{_mb(budget)} (at {info.filename[:100]!r})"
                )
    return bytes(data)


def _mb(size: int) -> str:
    return f"{size / (1 << 20):g} MB"


def sources(path: str, request: dict[str, Any]) -> dict[str, str]:
    """The wanted members by name (base64), or ``Refused``."""
    max_files, max_bytes = int(request["max_files"]), int(request["max_bytes"])
    suffixes = tuple(request["suffixes"])
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise Refused(f"not a valid zip archive ({exc})") from None
    with archive:
        members = archive.infolist()
        if len(members) > max_files:
            raise Refused(
                f"the archive has {len(members)} members, more than the limit of {max_files}"
            )
        for info in members:
            _check(info)
        found: dict[str, str] = {}
        remaining = max_bytes
        for info in members:
            if info.is_dir() or not info.filename.lower().endswith(suffixes):
                continue
            data = _read(archive, info, remaining)
            remaining -= len(data)
            found[info.filename.replace("\\", "/")] = base64.b64encode(data).decode()
        return found


def main() -> None:
    request = framing.read_frame(framing.REQUEST_FD)
    try:
        reply: dict[str, Any] = {"files": sources(os.environ["GRADER_SUBMISSION"], request)}
    except Refused as exc:
        reply = {"refused": str(exc)[:300]}
    except (
        zipfile.BadZipFile,
        NotImplementedError,
        RuntimeError,
        EOFError,
        OSError,
        ValueError,
    ) as exc:
        reply = {"refused": f"the archive is damaged ({type(exc).__name__}: {exc})"[:300]}
    framing.write_frame(framing.REPLY_FD, reply)


if __name__ == "__main__":
    main()
