"""One grade's run: submissions and uploads found, options and paths, trust and the pre-started
worker (``grader/run/``)."""
