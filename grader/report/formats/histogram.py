"""A score histogram as a PNG, drawn with numpy and zlib: no plotting library to install.

Bars over ten bins of the score as a percentage of the maximum, the bin edges and the tallest
count written in a small pixel font. Extra credit above the maximum falls in the last bin.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import numpy as np

WIDTH, HEIGHT, MARGIN, SCALE = 640, 320, 40, 2
BINS = 10
INK, BAR, PAPER = (40, 40, 40), (70, 120, 190), (255, 255, 255)
GLYPHS = {  # 3x5 pixels, rows top to bottom
    "0": "111101101101111",
    "1": "010110010010111",
    "2": "111001111100111",
    "3": "111001111001111",
    "4": "101101111001001",
    "5": "111100111001111",
    "6": "111100111101111",
    "7": "111001001001001",
    "8": "111101111101111",
    "9": "111101111001111",
    "%": "101001010100101",
}


def counts(percentages: Sequence[float]) -> list[int]:
    """How many scores fall in each tenth of the maximum (the last bin includes 100%)."""
    bins = [0] * BINS
    for value in percentages:
        bins[min(max(int(value // (100 / BINS)), 0), BINS - 1)] += 1
    return bins


def _text(canvas: np.ndarray, text: str, x: int, y: int) -> None:
    """Write ``text`` with its top-left corner at (x, y)."""
    for ch in text:
        glyph = np.array([int(b) for b in GLYPHS[ch]], dtype=bool).reshape(5, 3)
        block = np.kron(glyph, np.ones((SCALE, SCALE), dtype=bool))
        canvas[y : y + 5 * SCALE, x : x + 3 * SCALE][block] = INK
        x += 4 * SCALE


def _png(canvas: np.ndarray) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    height, width, _ = canvas.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), canvas.reshape(height, -1)], axis=1)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 9))
        + chunk(b"IEND", b"")
    )


def histogram_png(percentages: Sequence[float]) -> bytes:
    """The PNG bytes of the histogram of ``percentages`` (scores as % of the maximum)."""
    canvas = np.full((HEIGHT, WIDTH, 3), PAPER, dtype=np.uint8)
    bins = counts(percentages)
    tallest = max(bins) or 1
    left, right, top, bottom = MARGIN, WIDTH - MARGIN, MARGIN // 2, HEIGHT - MARGIN
    step = (right - left) // BINS
    for n, count in enumerate(bins):
        height = round((bottom - top) * count / tallest)
        canvas[bottom - height : bottom, left + n * step + 2 : left + (n + 1) * step - 2] = BAR
    canvas[top : bottom + 1, left - 1] = INK
    canvas[bottom, left - 1 : right] = INK
    for n in range(BINS + 1):
        label = str(n * 100 // BINS) + ("%" if n == BINS else "")
        _text(canvas, label, left + n * step - len(label) * 2 * SCALE, bottom + 6)
    _text(canvas, str(tallest), 4, top)
    _text(canvas, "0", 4, bottom - 5 * SCALE)
    return _png(canvas)
