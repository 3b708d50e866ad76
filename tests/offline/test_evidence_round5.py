"""Issue 33 §1, round 5: the rules revised on the six labelled sets, each change kept only when the
leave-one-repository-out figures improved (bench/cv_prior.py). Each rule is a table: the case it
was made for, the neighbours it must leave alone."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline, parse_title
from bot.analysis.offline.patch import code_changes
from tests.offline.helpers import LOW, MEDIUM, commit, mod

# --- a hunk that opens inside a docstring ------------------------------------------------------------

# The hunk starts in the function's docstring: its closing quotes are not an opening, and the code
# after them is code.
AFTER_DOCSTRING = (
    "@@ -480,7 +480,7 @@ def get_buffers(module, recurse=False):\n"
    "             Whether or not to return the fully-qualified names.\n"
    '     """\n'
    " \n"
    "-    found = module._buffers_set\n"
    "+    found = set(module._buffers_set)\n"
    "     if recurse:\n"
)
MODULE_DOCSTRING_END = (
    "@@ -15,6 +15,8 @@ This module is self-contained.\n"
    " or the runtime.\n"
    ' """\n'
    " \n"
    "+from __future__ import annotations\n"
    "+\n"
    " import torch\n"
)
# A bare quote after a `def` opens its docstring: the text after it is not code.
OPENED_DOCSTRING = (
    "@@ -3,6 +3,6 @@ def power(x):\n"
    " def power(x):\n"
    '     """\n'
    "-    Square x.\n"
    "+    Cube x\n"
    '     """\n'
    "     return x ** 3\n"
)
# The hunk's first line is the closing quote: the code below it says so.
FIRST_LINE_CLOSES = (
    "@@ -791,6 +791,6 @@ class Tracker:\n"
    '         """\n'
    "         import mlflow\n"
    " \n"
    "-        for name, value in list(values.items()):\n"
    "+        for name, value in values.items():\n"
)
PROSE_CLOSING = (
    "@@ -20,4 +20,4 @@ def power(x):\n"
    "     Returns:\n"
    '-        the power."""\n'
    '+        the cube."""\n'
    "     return x ** 3\n"
)


@pytest.mark.parametrize(
    "patch, expected",
    [
        (AFTER_DOCSTRING, 2),
        (MODULE_DOCSTRING_END, 1),
        (FIRST_LINE_CLOSES, 2),
        ('@@ -1,3 +1,3 @@\n    """\n-    Square x.\n+    Cube x.\n    """\n', 0),  # prose follows: opens
        (OPENED_DOCSTRING, 0),
        (PROSE_CLOSING, 0),
        ('@@ -1,3 +1,3 @@\n x = 1\n-y = """a"""\n+y = """b"""\n', 0),  # a reworded string
    ],
)
def test_a_hunk_that_opens_inside_a_docstring_still_shows_its_code(patch, expected):
    assert code_changes(mod("src/lib/utils/modeling.py", 1, 1, patch)) == expected


@pytest.mark.parametrize("patch, expected", [(AFTER_DOCSTRING, MEDIUM), (OPENED_DOCSTRING, LOW)])
def test_a_fix_below_a_docstring_is_a_fix_of_shipped_code(patch, expected):
    a = analyse_offline(
        commit("Fix get_buffers mutating the module's set"), [mod("src/lib/utils/modeling.py", 1, 1, patch)], "en"
    )
    assert a.importance is expected


# --- a change the title names no kind for, by how much code it changes -------------------------------


def _code_lines(n: int) -> str:
    """A hunk of a function's body changing `n` lines of code (each a new assignment)."""
    body = "".join(f"+    buf_{i} = grads[{i}].to(acc_dtype)\n" for i in range(n))
    return f"@@ -10,2 +10,{n + 2} @@ def reduce(grads, acc_dtype):\n     out = []\n{body}     return out\n"


@pytest.mark.parametrize(
    "title, n, expected",
    [
        (
            "Consistent fp32 grads flow",
            6,
            MEDIUM,
        ),  # no kind named: 6 lines of code that ships is a change users get (round 7)
        ("Consistent fp32 grads flow", 5, LOW),  # below it, a tweak
        ("Fix fp32 grads flow", 1, MEDIUM),  # a fix borne out by any code change, as before
    ],
)
def test_a_change_without_a_named_kind_is_medium_from_six_lines_of_shipped_code(title, n, expected):
    files = [mod("src/lib/runtime/reduce.py", n, 0, _code_lines(n))]
    assert analyse_offline(commit(title), files, "en").importance is expected


def test_lines_of_a_change_without_a_named_kind_count_only_in_shipped_source():
    files = [mod("tests/test_reduce.py", 8, 0, _code_lines(8)), mod("src/lib/runtime/reduce.py", 2, 0, _code_lines(2))]
    assert analyse_offline(commit("Consistent fp32 grads flow"), files, "en").importance is LOW


# --- behaviour said unchanged for one path only ----------------------------------------------------


@pytest.mark.parametrize(
    "body, preserving",
    [
        ("There is no behavior change for the common path.", False),  # the rare path changes
        ("There is no behavior change in the normal case.", False),
        ("This PR keeps 4.0 behavior unchanged apart from the decode crash fix.", False),
        ("Behavior unchanged, except that empty lists are refused.", False),
        ("This is a pure refactor; no behavior change.", True),  # the change as a whole
        ("No behavior change.", True),
    ],
)
def test_behaviour_said_unchanged_for_one_path_is_not_a_refactor(body, preserving):
    assert parse_title("Guard the scheduler against zero warmup steps", body).preserving is preserving
