"""The pytest plugin, the scoring, the seeds and draws, replay and blame (``grader/grading/``)."""
