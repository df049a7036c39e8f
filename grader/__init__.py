"""Automated grading harness for hand-built autograd engines."""

import os

__version__ = "0.1.0"

ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""One thread in every BLAS and OpenMP pool of the grader's processes. numpy's OpenBLAS starts
a thread per core when numpy is imported, and they spin: 60 ms of CPU at every import on a
2-core machine, in every command and grading process, as much as a tenth of starting a worker.
The grader's arrays are small, so a pool never sped it up; one thread also sums a product in
one order wherever it runs. Set here, before any of the grader's modules imports numpy (a value
the user set stays); grading processes and workers get it whatever the user set."""

os.environ.update({name: value for name, value in ONE_THREAD.items() if name not in os.environ})
