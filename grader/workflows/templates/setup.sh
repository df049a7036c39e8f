#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image. Installs the grader without
# PyTorch: the reference solutions in /autograder/source/reference are the oracle.
set -euxo pipefail
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip bubblewrap
PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
    PYTHON=python3.11
fi
"$PYTHON" -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --upgrade pip
/autograder/venv/bin/python -m pip install /autograder/source
# Only root (the trusted grader) may read the rubric, the reference and the seed: without
# bubblewrap the student's code still runs as an unprivileged worker uid.
chmod -R go-rwx /autograder/source
