"""The ways people start a grade: the API and command line, batch, watch, uploads, releases for
students and Gradescope, stubs and the benchmark.
"""
