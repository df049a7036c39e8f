"""A second correct engine in the karpathy-micrograd API, written differently from the
reference (closures made by one helper, its own formulas, an iterative topological sort)."""
