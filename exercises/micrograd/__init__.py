"""micrograd: a scalar-valued reverse-mode autograd engine (see engine.py)."""
