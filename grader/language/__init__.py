"""The graph language: graphs and the op table, grader-made graphs, strategies, snippets.

Everything here is plain data and pure functions, shared by the trusted parent and the
sandboxed worker: a graph drawn by a strategy is the snippet a student runs.
"""
