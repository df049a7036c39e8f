"""The sandboxed worker: hostile and threaded engines, probes and hooks (``grader/worker/``)."""
