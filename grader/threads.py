"""One thread in every BLAS and OpenMP pool of the grader's processes.

numpy's OpenBLAS starts a thread per core when numpy is imported, and they spin: 60 ms of CPU
at every import on a 2-core machine, in every grading process and command, as much as a tenth
of starting a worker. The grader's arrays are small, so a pool never sped it up; one thread
also sums a product in one order wherever it runs. The sandboxed worker's environment has the
same (``grader.worker.policy``)."""

from __future__ import annotations

ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
