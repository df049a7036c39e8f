"""The sandboxed worker: its sandbox, hostile and threaded engines, probes and hooks
(``grader/worker/``)."""
