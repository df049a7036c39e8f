"""The entry points instructors run: watch, bench, profiling and the instructor tools
(``grader/workflows/``)."""
