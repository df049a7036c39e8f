#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image. Installs the grader, and with
# it the course in source/courses/ (setup.py's build step puts it in the package), without
# PyTorch: the course's reference solution is the oracle. A test runs this very script against
# a fake tree: AUTOGRADER_ROOT moves the tree, GRADER_APT=0 skips apt (no root, no network).
set -euxo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    PYTHON=python3.11
fi
if [ "${GRADER_APT:-1}" != 0 ]; then
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-venv python3-pip bubblewrap
    if [ "$PYTHON" = python3.11 ]; then
        apt-get install -y --no-install-recommends python3.11 python3.11-venv
    fi
fi
"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
"$ROOT/venv/bin/python" -m pip install "$ROOT/source"
# The course's reference graded on its own rubric once, here, where a broken one fails the
# image's build for the instructor to see, instead of every student's grade.
COURSE="$("$ROOT/venv/bin/python" -I -c 'import json, sys; print(json.load(open(sys.argv[1])).get("course", "course"))' "$ROOT/source/gradescope.json")"
"$ROOT/venv/bin/python" -I -m grader check-reference --course "$COURSE"
# The reference's runs at the secret seed, recorded once: each submission's grade replays them
# (the same verdicts as drawing them again, in about half the time).
"$ROOT/venv/bin/python" -I -m grader.release.autograder --record
# Only root (the trusted grader) may read the rubric, the reference and the seed, in source/
# and in the installed package: without bubblewrap the student's code still runs as an
# unprivileged worker uid.
COURSES="$("$ROOT/venv/bin/python" -I -c 'from grader.layout import COURSES; print(COURSES)')"
chmod -R go-rwx "$ROOT/source" "$COURSES"
