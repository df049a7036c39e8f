"""Every convention a check charges comes from the course's own words, quoted in its profile;
a convention no profile quotes is read the least demanding way. Code a course's starter gives
(an edition's ``given``) is told apart from the student's by its fingerprint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.language import profiles
from grader.language.conventions import KEYS
from grader.language.editions import fingerprint
from grader.language.profiles import BROADCASTING, KINKS, SECOND_ADDS, ProfileError
from grader.layout import COURSES
from tests.grading import ENGINES
from tests.planted import Edit, plant

OPS = "python/needle/ops/ops_mathematic.py"
ADD_COMPUTE = "        # BEGIN SOLUTION [needle.ops.add]: return the elementwise sum\n"
ADD_GRADIENT = "        # BEGIN SOLUTION [needle.ops.add]: both local derivatives are 1\n"
AS_THE_STARTER = (
    Edit(
        OPS,
        f"    def compute(self, a, b):\n{ADD_COMPUTE}",
        f"    def compute(self, a: NDArray, b: NDArray):\n{ADD_COMPUTE}",
    ),
    Edit(
        OPS,
        f"    def gradient(self, out_grad, node):\n{ADD_GRADIENT}",
        f"    def gradient(self, out_grad: Tensor, node: Tensor):\n{ADD_GRADIENT}",
    ),
)
"""EWiseAdd's signatures annotated as the starter's are: then its syntax tree is the starter's."""

MINIMAL = """profile: mine
title: mine
assignments:
  babygrad:
    kind: tensor
    walk: {topo: nested, zero_grad: absent}
    ops: [add, relu]
"""


def test_a_convention_no_profile_states_is_read_the_least_demanding_way(tmp_path):
    path = tmp_path / "profile.yaml"
    path.write_text(MINIMAL)
    own = profiles.load(path).of("babygrad")
    assert {key: c.rule for key, c in own.conventions.items()} == {
        key: rules.open for key, rules in KEYS.items()
    }
    assert not any(c.charged for c in own.conventions.values())
    assert (own.walk.second_backward, own.walk.frozen_leaves) == ("unspecified", "unspecified")
    assert not own.has(KINKS) and not own.has(SECOND_ADDS)


@pytest.mark.parametrize(
    ("key", "rule"), [("kinks", "zero"), ("second_backward", "overwrite"), ("order", "root_first")]
)
def test_a_convention_charged_without_the_courses_words_is_refused_in_one_line(tmp_path, key, rule):
    path = tmp_path / "profile.yaml"
    path.write_text(f"{MINIMAL}    conventions:\n      {key}: {{rule: {rule}, source: its docs}}\n")
    with pytest.raises(ProfileError) as refused:
        profiles.load(path)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:9: assignments/babygrad/conventions/{key}: {rule}")
    assert "needs the course's own words" in message


def test_a_quoted_convention_is_charged_and_an_open_one_needs_no_words(tmp_path):
    path = tmp_path / "profile.yaml"
    path.write_text(
        f"{MINIMAL}    conventions:\n"
        '      kinks: {rule: zero, quote: "0 at 0", source: "ops.py, ReLU"}\n'
        "      second_backward: {rule: unspecified}\n"
    )
    own = profiles.load(path).of("babygrad")
    assert own.has(KINKS)
    assert own.convention("kinks").words == 'The course\'s own words (ops.py, ReLU): "0 at 0"'
    assert own.convention("second_backward").words == ""


def _said(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("folder", ["exercises", "reference"])
def test_this_courses_conventions_quote_its_handout_word_for_word(folder):
    """The handout's docstrings (``exercises/``), which the reference keeps too: each quote is
    in the file its source names."""
    for own in profiles.course().assignments.values():
        for convention in own.conventions.values():
            if not convention.charged:
                continue
            file = convention.source.split(",")[0].replace("exercises/", f"{folder}/", 1)
            assert _said(convention.quote) in _said((COURSES.parent / file).read_text()), file


def test_every_charged_convention_of_every_course_has_its_words():
    for profile in sorted(COURSES.glob("*/profile.yaml")):
        for own in profiles.load(profile).assignments.values():
            for convention in own.conventions.values():
                assert not convention.charged or convention.words, (profile, convention)


def test_a_fingerprint_ignores_comments_and_docstrings_and_sees_any_change_of_code():
    given = 'class Op:\n    """Given."""\n    def gradient(self, g, node):\n        return g, g\n'
    same = "class Op:  # the starter's\n\n    def gradient(self, g, node):\n        return (g, g)\n"
    changed = given.replace("return g, g", "return g, -g")
    assert fingerprint(given, "Op") == fingerprint(same, "Op")
    assert fingerprint(given, "Op") != fingerprint(changed, "Op")
    assert fingerprint(given, "Other") is None
    assert fingerprint("class (", "Op") is None


def test_karpathys_lecture_and_repository_are_editions_told_apart_by_relu():
    profile = profiles.load(COURSES / "karpathy-micrograd" / "profile.yaml")
    for engine, edition, lacks in [
        (COURSES / "karpathy-micrograd" / "reference", "repository", {"tanh", "exp"}),
        (ENGINES / "karpathy-micrograd" / "other", "repository", {"tanh", "exp"}),
        (ENGINES / "karpathy-micrograd" / "lecture", "lecture", {"relu", "rsub", "rdiv"}),
        (ENGINES / "karpathy-micrograd" / "lecture-relu", "lecture with relu", {"rsub", "rdiv"}),
    ]:
        own = profile.as_uploaded(Path(engine)).of("micrograd")
        assert own.edition is not None and own.edition.name == edition
        assert set(profile.of("micrograd").ops) - set(own.ops) == lacks


def test_tinytorchs_handouts_are_editions_told_apart_by_reduce_broadcast_grad():
    """The handout that asks for ``_reduce_broadcast_grad`` grades it; in the older ones the
    given ``Tensor.backward`` sums a broadcast gradient back, and an ``apply`` returning it
    unreduced is right."""
    profile = profiles.load(COURSES / "tinytorch-autograd" / "profile.yaml")
    for engine, edition, reduces in [
        (COURSES / "tinytorch-autograd" / "reference", "_reduce_broadcast_grad", True),
        (ENGINES / "tinytorch-autograd" / "backward-reduces", "Tensor.backward reduces", False),
    ]:
        own = profile.as_uploaded(engine).of("tinytorch")
        assert own.edition is not None and own.edition.name == edition
        assert own.has(BROADCASTING) is reduces


def test_needles_starter_classes_left_as_given_are_the_courses_and_changed_ones_the_students(
    tmp_path,
):
    """The references' classes are their own (a reference graded as an upload is the audit's
    baseline: every item of it graded); a class changed to the starter's syntax tree (here the
    reference's EWiseAdd with the starter's annotations) is the course's."""
    profile = profiles.load(COURSES / "needle-hw1" / "profile.yaml")
    for engine in (COURSES / "needle-hw1" / "reference", ENGINES / "needle-hw1" / "layout2022"):
        own = profile.as_uploaded(engine).of("needle")
        assert own.edition is not None and own.edition.kept == ()
    upload = plant(tmp_path, *AS_THE_STARTER, reference=COURSES / "needle-hw1" / "reference")
    own = profile.as_uploaded(upload).of("needle")
    assert own.edition is not None and own.edition.kept == ("add",)
    assert not own.has("add") and own.has("mul") and own.has("pow")
    edition = own.edition
    feedback = edition.because(("add",)).feedback("EWiseAdd")
    assert feedback.startswith("given by the course: ")
    # one layout serves 2023's to 2025's starters: it is named, never a year the upload may
    # not be from
    assert "2023" not in feedback and "layout with ops/ops_mathematic.py" in feedback
    assert edition.because(("relu", "add")).as_given
    assert not edition.because(("relu",)).as_given
