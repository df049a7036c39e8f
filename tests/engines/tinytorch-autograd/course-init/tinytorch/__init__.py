"""A top ``__init__.py`` as a TinyTorch repository ships one (written here, not copied): it
imports every module of the course, so until a student has exported the later modules it
cannot be imported, and neither can ``tinytorch.core.autograd`` beneath it. Laid over the
course's reference (``tests/flows/test_courses.py``): the course's profile says its package has
no top ``__init__`` (``init: false``), so this file is the course's, not the student's, and
costs nothing."""

from .core.activations import ReLU, Sigmoid  # noqa: F401 - module 02
from .core.optimizers import SGD  # noqa: F401 - module 06: not exported yet
from .core.tensor import Tensor  # noqa: F401 - module 01
