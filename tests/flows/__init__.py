"""End to end, as users run them: every course graded whole, its snippets, adding an op."""
