"""Batch grading: a folder of uploads graded in ``-j`` long-lived lanes (``lane``), each grade
kept in a ledger keyed by everything that decides it so a regrade reuses what has not changed
(``ledger``), the progress shown while it runs (``progress``), and the gradebook, feedback and
summary written at the end (``batch``).

The one seam another job may use: the audit grades its mutants as a batch, through
``batch.run``, ``batch.BatchOptions`` and ``batch.DEFAULT_SLOT`` (``tests/test_layout.py`` holds
every other import between job folders at zero). This package imports nothing itself: a lane
runs as ``python -m grader.batch.lane``.
"""
