"""Text written by student code, made safe to show: one rule per audience, one shared core.

A worker's stdout and stderr are bytes an instructor may read (any language, unbounded);
text inside a JSON answer goes into a student's feedback (printable ASCII, one short line).
Both lose terminal escape sequences first, whole, so none can redraw or retitle a terminal.
A program that failed (a probe, a grading run) is quoted by the one line that says why.
"""

from __future__ import annotations

import re
from typing import Any

MAX_TEXT = 300
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|$)"  # OSC ... BEL or ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\|$)"  # DCS, SOS, PM, APC ... ST
    r"|\x1b[ -/]*[0-~]"  # other escapes
    r"|\x1b"  # a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_NOT_ASCII_TEXT = re.compile(r"[^\x20-\x7e\n\t]")


def sanitize_output(data: bytes) -> str:
    """A worker's output as text: escapes stripped, control characters but newlines and
    tabs dropped, Unicode kept (undecodable bytes become U+FFFD)."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    text = _ESCAPES.sub("", text)
    return "".join(ch for ch in text if ch == "\n" or ch == "\t" or ch.isprintable())


def sanitize_message(text: Any, limit: int = MAX_TEXT) -> str:
    """Text from an answer, for a student: escapes stripped, printable ASCII only, bounded."""
    clean = _NOT_ASCII_TEXT.sub("", _ESCAPES.sub("", str(text)))
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."


def last_line(text: str, limit: int = 200, prefer: str = "") -> str:
    """The last non-blank line of ``text``, stripped and cut to ``limit`` characters ("" if
    none); with ``prefer``, the last line containing it (in any case) if there is one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    preferred = [line for line in lines if prefer and prefer.lower() in line.lower()]
    return (preferred or lines or [""])[-1][:limit]
