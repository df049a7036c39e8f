"""Batch grading: lanes, the ledger, progress, regrades, unfinished grades and exports
(``grader/batch/``)."""
