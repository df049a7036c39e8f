"""micrograd, as built in Andrej Karpathy's lecture: a scalar reverse-mode autograd engine
(the ``Value`` class lives in ``micrograd.engine``)."""
