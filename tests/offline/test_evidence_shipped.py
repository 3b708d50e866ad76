"""A fix, feature or speed-up of the code that ships is medium (issue 33, round 2): what a careful
reader of the diff says, whatever its size — when the diff bears the kind out (code lines change in
shipped source: not tests, docs, CI, tooling, comments, docstrings, strings or log lines). It is a
guess from the diff's shape, so a repository's learned profile lowers it where the release notes
rarely list such changes."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline, parse_title
from bot.core.models import Judgement
from tests.offline.helpers import LOW, MEDIUM, T, commit, mod, new

CODE = "@@ -10,3 +10,3 @@ def decode(batch):\n     q = batch.q\n-    mask = q < limit\n+    mask = q <= limit\n     return mask\n"
COMMENT = "@@ -10,3 +10,3 @@ def decode(batch):\n     q = batch.q\n-    # the mask of q\n+    # the mask of every q\n     return q\n"
DOCSTRING = '@@ -10,4 +10,4 @@ def decode(batch):\n     """Decode\n-    a batch.\n+    one batch.\n     """\n'
MESSAGE = '@@ -10,2 +10,2 @@ def decode(batch):\n-    raise ValueError("bad batch")\n+    raise ValueError("the batch is bad")\n'
LOGGING = '@@ -10,2 +10,2 @@ def decode(batch):\n-    logger.info("decoding %s", batch)\n+    logger.debug("decoding %s", batch)\n'
REINDENT = (
    "@@ -10,2 +10,2 @@ def decode(batch):\n-    if ready:\n-        run()\n+        if ready:\n+            run()\n"
)
KERNEL = "@@ -5,2 +5,2 @@ __global__ void reduce(float* o) {\n-  int i = blockIdx.x * n;  // row\n+  int i = blockIdx.x * n + off;  // row\n"


@pytest.mark.parametrize(
    "path,patch,expected",
    [
        ("pkg/decode.py", CODE, 2),
        ("pkg/decode.py", COMMENT, 0),
        ("pkg/decode.py", DOCSTRING, 0),
        ("pkg/decode.py", MESSAGE, 0),  # a reworded message changes no code
        ("pkg/decode.py", LOGGING, 0),
        ("pkg/decode.py", REINDENT, 0),  # the same code, moved
        ("csrc/reduce.cu", KERNEL, 2),
        ("pkg/decode.py", None, 0),
    ],
)
def test_code_changes_counts_code_lines_only(path, patch, expected):
    from bot.analysis.offline.patch import code_changes

    assert code_changes(mod(path, 1, 1, patch)) == expected


@pytest.mark.parametrize(
    "title,files,expected",
    [
        # a fix, a feature, a speed-up of shipped code: medium, however small
        ("fix batched seqs with different stop words (#4671)", [mod("lmdeploy/engine/agent.py", 1, 1, CODE)], MEDIUM),
        ("[Bugfix] Fix ImportError in get_chat_template", [mod("lmdeploy/cli/utils.py", 1, 1, CODE)], MEDIUM),
        ("feat: support FP8 KV on SM90", [mod("include/mla.cuh", 1, 1, KERNEL)], MEDIUM),
        ("[Perf] Cut launch overhead", [mod("pkg/decode.py", 1, 1, CODE)], MEDIUM),
        ("support num_experts_per_tok=10 in the engine", [mod("src/engine/moe.cu", 1, 1, KERNEL)], MEDIUM),
        ("fix: the masks", [mod(f"pkg/m{i}.py", 1, 1, CODE) for i in range(8)], MEDIUM),  # never high by kind
        # the kind is a hint the diff has to bear out
        ("fix: the mask of q", [mod("pkg/decode.py", 1, 1, COMMENT)], LOW),
        ("Fix the decode docstring", [mod("pkg/decode.py", 1, 1, DOCSTRING)], LOW),
        ("fix: log level of decoding", [mod("pkg/decode.py", 1, 1, LOGGING)], LOW),
        ("fix(ci): retry flaky jobs", [mod(".github/workflows/ci.yml", 1, 1, CODE)], LOW),
        ("fix the decode test", [mod("tests/test_decode.py", 1, 1, CODE)], LOW),
        ("Fix the example", [mod("examples/decode.py", 1, 1, CODE)], LOW),
        ("Fix the benchmark", [mod("benchmarks/bench_decode.py", 1, 1, CODE)], LOW),
        ("Fix decode", [mod("pkg/decode.py", 1, 1)], LOW),  # no patch: nothing bears it out
        # not a fix, feature or speed-up
        ("refactor: split decode", [mod("pkg/decode.py", 1, 1, CODE)], LOW),
        ("Update decode", [mod("pkg/decode.py", 1, 1, CODE)], LOW),
    ],
)
def test_a_fix_feature_or_speed_up_of_shipped_code_is_medium(title, files, expected):
    a = analyse_offline(commit(title), files, "en")
    assert a.importance is expected, a.importance_reason
    if expected is MEDIUM:
        assert "to the code that ships" in a.importance_reason
        zh = analyse_offline(commit(title), files, "zh")
        assert "改动随发布交付的代码" in zh.importance_reason


@pytest.mark.parametrize(
    "above_low,expected",
    [
        (0.3, LOW),  # the project's notes rarely list such changes: the guess gives way
        (0.6, MEDIUM),
    ],
)
def test_the_learned_profile_lowers_the_guess_where_the_notes_list_little(above_low, expected):
    files = [mod("pkg/decode.py", 1, 1, CODE)]
    assert analyse_offline(commit("fix: the mask"), files, "en").importance is MEDIUM  # the rules' guess
    judgement = Judgement(above_low=above_low, high=0.0, heading="", heading_share=0.0)
    fix = analyse_offline(commit("fix: the mask"), files, "en", judgement=judgement)
    assert fix.importance is expected, fix.importance_reason
    # a specific fact (a new flag) gives way only to a clear no
    flag = "@@ -5,1 +5,2 @@\n+    parser.add_argument('--max-retries', type=int)\n"
    added = analyse_offline(commit("Add retry flag"), [mod("pkg/cli.py", 1, 0, flag)], "en", judgement=judgement)
    assert added.importance is MEDIUM


@pytest.mark.parametrize(
    "title,body,preserving",
    [
        ("feat(moe_ep): add a push backend", "Existing backend behavior is unchanged.", False),
        ("feat: cuDNN paged prefill", "The legacy graph is used unchanged — no behavior change otherwise.", False),
        ("perf: fuse the reduction", "No functional change.", False),  # a declared speed-up changes behaviour
        ("Add a helper for imports", "This is a pure refactor that relies on existing test coverage.", True),
        ("Move decode into its own module", "No functional change.", True),
        ("Add an FP8 path", "Existing BF16/FP16 and FP8 per-tensor scale behavior is unchanged.", False),
        ("Add an FP8 path", "No behaviour change for existing users.", False),
    ],
)
def test_behaviour_said_unchanged_is_read_for_the_whole_change(title, body, preserving):
    assert parse_title(title, body).preserving is preserving


def test_a_declared_feature_whose_body_keeps_old_paths_is_not_a_refactor():
    a = analyse_offline(
        commit("feat(moe_ep): add SM90 push FP8 mega-MoE backend", "Existing backend behavior is unchanged."),
        [new("flashinfer/moe_ep/backends/push.py", 30, "@@ -0,0 +1,2 @@\n+def run(x):\n+    return push(x)\n")],
        "en",
    )
    assert (a.change_type, a.importance) == (T.FEATURE, MEDIUM), a.importance_reason
    assert "refactor" not in a.importance_reason


@pytest.mark.parametrize(
    "title,ctype,strong",
    [
        ("TEST：update ascend and mtp test config", T.TESTS, True),  # a full-width colon
        ("ENH Add a sparse solver", T.FEATURE, True),
        ("ENH: add a sparse solver", T.FEATURE, True),
        ("BUG: wrong shape in solve", T.BUGFIX, True),
        ("TST add solver tests", T.TESTS, True),
        ("MAINT: the solver's imports", None, False),  # says nothing of the type: the files decide
        ("Improve engine health monitoring", T.FEATURE, False),
        ("Enhance the scheduler's fairness", T.FEATURE, False),
        ("PERF401 fixes in the solver", None, False),  # a rule code, not a label
    ],
)
def test_labels_and_verbs_that_name_the_type(title, ctype, strong):
    info = parse_title(title)
    assert (info.change_type, info.strong) == (ctype, strong)


def test_a_revert_squashed_into_a_fix_is_not_a_revert():
    body = '* fix\n\n* fix race after wakeup\n\n* Revert "fix race after wakeup"\n\nThis reverts commit 94adf3140db5d2ce21622395ce14193185847d01.'
    c = commit("fix cancel stopped seq (#4654)", body, reverts="94adf3140db5d2ce21622395ce14193185847d01")
    a = analyse_offline(c, [mod("lmdeploy/engine/engine.py", 1, 1, CODE)], "en")
    assert (a.change_type, a.importance) == (T.BUGFIX, MEDIUM), a.importance_reason
    assert "Revert" not in a.summary and "94adf31" not in a.summary
    # git's own revert commit still is one
    own = commit('Revert "Use a faster encoder"', body, reverts="94adf3140db5d2ce21622395ce14193185847d01")
    assert analyse_offline(own, [mod("pkg/encode.py", 10, 25, CODE)], "en").change_type is T.REVERT


def test_a_revert_of_docstrings_only_is_low():
    docstrings = (
        '@@ -1,30 +1,30 @@ def validate(x):\n     """Validate\n'
        + "-    old words\n+    new words\n" * 12
        + '     """\n'
    )
    a = analyse_offline(commit("Revert some docs changes from #13457"), [mod("pkg/main.py", 12, 12, docstrings)], "en")
    assert (a.change_type, a.importance) == (T.REVERT, LOW), a.importance_reason
    coded = analyse_offline(commit('Revert "Use a faster encoder"'), [mod("pkg/encode.py", 1, 1, CODE)], "en")
    assert coded.importance is LOW  # small: 2 lines
    big = "@@ -1,24 +1,24 @@\n" + "".join(f"-    x{i} = {i}\n+    x{i} = {i + 1}\n" for i in range(12))
    assert (
        analyse_offline(commit('Revert "Use a faster encoder"'), [mod("pkg/encode.py", 12, 12, big)], "en").importance
        is MEDIUM
    )


def test_a_ci_commit_with_a_script_and_images_names_the_build_not_the_tooling():
    dockerfile = "@@ -1,3 +1,3 @@\n FROM base\n-ENV PY=py312\n+ENV PY=flashinfer\n RUN make\n"
    a = analyse_offline(
        commit("ci: centralize minimum Python version at 3.10 (#4464)"),
        [
            mod(".github/workflows/release.yml", 4, 4),
            mod("docker/Dockerfile.cu126", 1, 1, dockerfile),
            mod("scripts/build_whl.sh", 9, 1, "@@ -1,1 +1,2 @@\n+exit 1\n"),
        ],
        "en",
    )
    assert a.importance is LOW, a.importance_reason
    assert "tooling such as benchmarks" not in a.importance_reason
    assert "docker/Dockerfile.cu126" in a.importance_reason
