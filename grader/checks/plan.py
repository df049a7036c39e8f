"""A replay's plan: the requests a replayed test will make, answered by the worker in batches.

A replay (``grader.grading.replay``) knows which requests the checks will make next: those of
the recorded run it follows. Asking the worker for many of their answers in one round trip
instead of one each saves the round trips; the worker runs the cases of a batch one after the
other, as it would one request at a time, so the answers are the same.
"""

from __future__ import annotations

import collections
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader.sandbox.launch import WorkerFailure
from grader.worker import protocol
from grader.worker.protocol import Request

BATCH_CASES = 16
"""A replay asks the worker for this many of its planned requests' answers at once: one round
trip instead of sixteen, and at most fifteen answers wasted where an engine leaves the recorded
run."""

Exchange = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
"""One request of one probe on several cases: a validated result per case, or the worker's
failure (``WorkerFailure``, ``protocol.InvalidAnswer``) raised."""


@dataclass
class Planned:
    """A request the plan expects the checks to make, and the worker's answer once asked."""

    request: Request
    text: str
    """The request as JSON: what a check's request must equal to be answered from here."""
    result: dict[str, Any] | None = None


def request_text(request: Request) -> str:
    """A request as compact JSON: two requests are the same one when their texts are equal."""
    return json.dumps(list(request), separators=(",", ":"))


class ReplayPlan:
    """The requests a replay expects next, in order, answered from batches of up to
    ``BATCH_CASES`` as long as the checks ask exactly what was planned: at the first request
    that differs, the rest of the plan is dropped."""

    def __init__(self) -> None:
        self._planned: collections.deque[Planned] = collections.deque()
        self.batching = True
        """Off once a batch went wrong, for the rest of the grade: a batch is given one
        request's time budget, which a slow but correct engine may not meet."""

    def expect(self, requests: list[Request]) -> None:
        """Plan ``requests`` (none: forget the plan)."""
        self._planned = collections.deque(
            Planned(request, request_text(request)) for request in requests
        )

    def answer(self, request: Request, exchange: Exchange) -> dict[str, Any] | None:
        """The planned answer to ``request``, asking ``exchange`` for the batch it starts
        where needed; None when there is no plan, ``request`` is not its next one, or
        batching is off. The worker failing the batch turns batching off and drops the plan
        before the failure propagates."""
        if not self._planned or not self.batching or self._planned[0].text != request_text(request):
            self._planned.clear()
            return None
        if self._planned[0].result is None:
            batch = list(
                itertools.takewhile(
                    lambda planned: planned.request[:2] == request[:2],
                    itertools.islice(self._planned, BATCH_CASES),
                )
            )
            try:
                results = exchange([planned.request[2] for planned in batch])
            except (WorkerFailure, protocol.InvalidAnswer):
                self.batching = False
                self._planned.clear()
                raise
            for planned, result in zip(batch, results, strict=True):
                planned.result = result
        return self._planned.popleft().result
