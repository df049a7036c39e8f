"""The entry points: the command line (``cli``: grade, batch, watch, audit), re-grading on every
save (``watch``), and the benchmark with its profile of where a grade's CPU goes (``bench``,
``profiling``). Each starts a job of the folders below it and does nothing else.
"""
