"""Length-prefixed JSON frames on dedicated file descriptors.

Both sides decode with ``body_size`` and ``decode_body``: the worker through ``read_frame``, the
parent as the bytes of a reply arrive. The parent never trusts what it reads: a frame that is
too large, truncated or not JSON raises ``FrameError`` and the worker is treated as broken.
A worker reads requests on ``REQUEST_FD`` and writes one reply to each on ``REPLY_FD``, so
whatever student code prints on stdout or stderr cannot be mistaken for a reply.
"""

from __future__ import annotations

import json
import os
import struct

MAX_FRAME_BYTES = 64 * 1024 * 1024
REQUEST_FD = 3
REPLY_FD = 4
HEADER = struct.Struct(">I")


class FrameError(Exception):
    """The peer sent something that is not a well-formed frame."""


def encode(message: object) -> bytes:
    """``message`` as one frame: a 4-byte length prefix, then compact JSON (no NaN)."""
    body = json.dumps(message, allow_nan=False, separators=(",", ":")).encode()
    if len(body) > MAX_FRAME_BYTES:
        raise ValueError(f"message of {len(body)} bytes exceeds the {MAX_FRAME_BYTES} byte cap")
    return HEADER.pack(len(body)) + body


def body_size(header: bytes | bytearray, cap: int = MAX_FRAME_BYTES) -> int:
    """The body length a frame's header (the first ``HEADER.size`` bytes of ``header``)
    announces; ``FrameError`` when it exceeds ``cap``."""
    (size,) = HEADER.unpack_from(header)
    if size > cap:
        raise FrameError(f"a frame of {size} bytes exceeds the {cap} byte cap")
    return size


def decode_body(body: bytes) -> object:
    """A frame's JSON body; any malformation becomes ``FrameError``."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise FrameError(f"frame is not valid JSON: {type(exc).__name__}") from None


def write_frame(fd: int, message: object) -> None:
    """Serialise ``message`` as JSON and write it with a 4-byte length prefix."""
    view = memoryview(encode(message))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise FrameError(
                "channel closed mid-frame" if chunks or size != HEADER.size else "channel closed"
            )
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> object:
    """Read one frame; any malformation becomes ``FrameError``, never another exception."""
    size = body_size(_read_exactly(fd, HEADER.size))
    return decode_body(_read_exactly(fd, size))
