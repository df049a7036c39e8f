"""The worker's stdout and stderr, drained so it never blocks, kept bounded for the report.

Both streams share one pipe that a thread reads continuously; only the first quarter and the
last three quarters of ``Limits.output_cap_bytes`` are kept, however much the worker prints.
"""

from __future__ import annotations

import os
import select
import threading

from grader.sandbox.sanitize import sanitize_output


class OutputSink:
    """Drains the worker's stdout+stderr pipe, keeping a bounded head and tail."""

    def __init__(self, fd: int, cap: int) -> None:
        self._fd = fd
        self._head_cap = cap // 4
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="grader-worker-output", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        try:
            while not self._stop.is_set():
                if not poller.poll(250):
                    continue
                try:
                    chunk = os.read(self._fd, 1 << 16)
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                self._add(chunk)
        finally:
            os.close(self._fd)

    def _add(self, chunk: bytes) -> None:
        with self._lock:
            self._total += len(chunk)
            room = self._head_cap - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            self._tail += chunk
            if len(self._tail) > 2 * self._tail_cap:
                del self._tail[: len(self._tail) - self._tail_cap]

    def finish(self, timeout: float) -> None:
        """Wait for end of output (the writers are dead), then stop reading regardless."""
        self._thread.join(timeout)
        self._stop.set()
        self._thread.join(1.0)

    def excerpt(self) -> str:
        """The kept head and tail, sanitized, with a note of how many bytes lie between."""
        with self._lock:
            tail = bytes(self._tail[-self._tail_cap :])
            omitted = self._total - len(self._head) - len(tail)
            head = bytes(self._head)
        if omitted <= 0:
            return sanitize_output(head + tail)
        return (
            f"{sanitize_output(head)}\n[... {omitted} bytes omitted ...]\n{sanitize_output(tail)}"
        )

    def last_text(self, size: int) -> str:
        """The last ``size`` bytes kept, decoded as they are (to look for signs, not to show)."""
        with self._lock:
            data = bytes((self._head + self._tail)[-size:])
        return data.decode("utf-8", errors="replace")
