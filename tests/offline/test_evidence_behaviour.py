"""Behaviour changes: reverts, defaults, new flags (hidden ones excepted)."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from bot.analysis.repo_config import parse_profile
from tests.offline.helpers import HASHES_V1, HIGH, LOW, MEDIUM, OPTIONS_V1, WHEN, T, analyse_last, commit, mod


def test_revert_is_at_least_medium_and_says_what_to_check():
    a = analyse_offline(commit('Revert "Use a faster JSON encoder" (#812)'), [mod("src/app/encode.py", 10, 25)], "zh")
    assert (a.change_type, a.importance) == (T.REVERT, MEDIUM)
    assert a.importance_reason == "回滚了已合入的改动，依赖它的代码需要复查"
    assert any("被回滚的改动" in r for r in a.risks)
    assert any("重新合入" in r for r in a.recommendations)


def test_revert_of_docs_is_still_low():
    a = analyse_offline(commit('Revert "Fix typo in README"'), [mod("README.md", 1, 1)], "en")
    assert (a.change_type, a.importance) == (T.REVERT, LOW)


def test_config_default_change_is_high_with_a_specific_risk():
    """A public settings module's default changes for everyone who leaves it unset (high since
    round 3 of issue 33; medium before)."""
    patch = "@@ -20,3 +20,3 @@ class SchedulerConfig:\n     max_num_seqs: int = 256\n-    enable_chunked_prefill: bool = False\n+    enable_chunked_prefill: bool = True\n"
    a = analyse_offline(commit("[Core] Turn on chunked prefill"), [mod("vllm/config/scheduler.py", 1, 1, patch)], "en")
    assert a.importance is HIGH
    assert "enable_chunked_prefill (False → True)" in a.importance_reason
    assert any("enable_chunked_prefill" in r and "False" in r for r in a.risks)
    assert "set enable_chunked_prefill=False explicitly" in a.recommendations[0]


def test_json_schema_description_is_not_a_config_default(repo):
    repo.commit(
        "Clarify the cache-dir description",
        {
            "app.schema.json": OPTIONS_V1.replace(
                "Path to the cache directory.", "Directory where downloaded wheels are cached."
            )
        },
        when=WHEN,
    )
    a = analyse_last(repo)
    assert a.importance is LOW, a.importance_reason
    assert "default" not in a.importance_reason.lower()
    repo.commit(
        "Move the default cache",
        {"app.schema.json": OPTIONS_V1.replace('"~/.cache/app"', '"~/.local/cache/app"')},
        when=WHEN,
    )
    changed = analyse_last(repo)
    assert changed.importance is MEDIUM
    assert '"~/.cache/app" → "~/.local/cache/app"' in changed.importance_reason


def test_added_cli_flags():
    added = "@@ -5,1 +5,2 @@\n+    parser.add_argument('--max-retries', type=int)\n"
    b = analyse_offline(commit("Add retry flag"), [mod("src/app/cli.py", 1, 0, added)], "en")
    assert b.importance is MEDIUM and "--max-retries" in b.importance_reason


def test_hidden_flags_are_not_user_facing():
    hidden = analyse_offline(
        commit("Add a secret --check-unreachable"),
        [
            mod(
                "src/app/main.py",
                3,
                0,
                '@@ -10,0 +10,3 @@ def parser():\n+    p.add_argument("--check-unreachable", action="store_true",\n'
                "+                   help=argparse.SUPPRESS)\n+    return p",
            )
        ],
        "en",
    )
    # A hidden flag is not a new user-facing flag (it may still be a feature of shipped code).
    assert "--check-unreachable" not in hidden.importance_reason and hidden.importance is not HIGH
    assert "flag" not in hidden.importance_reason
    shown = analyse_offline(
        commit("Add --check-unreachable"),
        [
            mod(
                "src/app/main.py",
                2,
                0,
                '@@ -10,0 +10,2 @@ def parser():\n+    p.add_argument("--check-unreachable", action="store_true",\n'
                '+                   help="Warn about unreachable code")',
            )
        ],
        "en",
    )
    assert shown.importance is MEDIUM and "--check-unreachable" in shown.importance_reason


# --- the parts of these sentences that differ by language, not only by words ----------------------


def test_several_changed_defaults_are_counted_the_way_each_language_counts():
    patch = (
        "@@ -20,4 +20,4 @@ class SchedulerConfig:\n-    max_num_seqs: int = 256\n-    max_model_len: int = 4096\n"
        "-    enable_chunked_prefill: bool = False\n+    max_num_seqs: int = 128\n+    max_model_len: int = 8192\n"
        "+    enable_chunked_prefill: bool = True\n"
    )
    files = [mod("vllm/config/scheduler.py", 3, 3, patch)]
    zh = analyse_offline(commit("[Core] Retune the scheduler"), files, "zh")
    en = analyse_offline(commit("[Core] Retune the scheduler"), files, "en")
    assert "（" in zh.importance_reason and "→" in zh.importance_reason
    assert "） 等 3 项" not in zh.importance_reason and "）等 3 项" in zh.importance_reason  # all three, no space
    assert ") and 2 more" in en.importance_reason  # the two not named


def test_one_new_flag_is_a_flag_and_two_are_flags():
    one = "@@ -5,1 +5,2 @@\n+    parser.add_argument('--max-retries', type=int)\n"
    two = one + "+    parser.add_argument('--retry-delay', type=float)\n"
    a = analyse_offline(commit("Add retry flag"), [mod("src/app/cli.py", 1, 0, one)], "en")
    b = analyse_offline(commit("Add retry flags"), [mod("src/app/cli.py", 2, 0, two)], "en")
    c = analyse_offline(commit("Add retry flags"), [mod("src/app/cli.py", 2, 0, two)], "zh")
    assert "Adds command-line flag --max-retries" in a.importance_reason
    assert "Adds command-line flags --max-retries, --retry-delay" in b.importance_reason
    assert "新增命令行参数 --max-retries、--retry-delay" in c.importance_reason


def test_revert_names_the_sha_never_a_cut_copy_of_the_title():
    """The reverted title is the reader's title already: quoting it again (cut at 60 characters)
    showed a fragment of it; the reverted commit is named by its SHA."""
    title = 'Revert "Use a faster JSON encoder for every response body the server streams" (#812)'
    reverting = commit(title, reverts="0123456789abcdef0123")
    files = [mod("src/app/encode.py", 10, 25)]
    en = analyse_offline(reverting, files, "en")
    zh = analyse_offline(reverting, files, "zh")
    assert en.importance_reason == "Reverts a change that had landed (0123456); anything relying on it needs checking"
    assert en.risks[0].startswith("The reverted change (0123456) in src/app/encode.py no longer applies")
    assert zh.risks[0].startswith("被回滚的改动（0123456）（src/app/encode.py）不再生效")
    assert en.summary == "Reverts `0123456` (`src/app/encode.py`, +10/−25 lines)."
    for a in (en, zh):
        said = " ".join([a.summary, a.importance_reason, *a.risks, *a.recommendations])
        assert "JSON encoder" not in said and "…" not in said


def test_gpu_kernel_insight_counts_the_files():
    kernels = [
        mod("csrc/attention/paged.cu", 40, 10),
        mod("csrc/attention/flash.cu", 30, 5),
        mod("csrc/quant/fp8.cu", 20, 5),
    ]
    en = analyse_offline(commit("[Kernel] Faster paged attention"), kernels, "en")
    zh = analyse_offline(commit("[Kernel] Faster paged attention"), kernels, "zh")
    one = analyse_offline(commit("[Kernel] Faster paged attention"), kernels[:1], "en")
    assert (
        "Changes 3 GPU kernel files (csrc/attention/paged.cu, csrc/attention/flash.cu and 1 more), which"
        in en.insights.performance
    )
    assert (
        "改动了 3 个 GPU 内核文件（csrc/attention/paged.cu、csrc/attention/flash.cu 等 3 个）"
        in zh.insights.performance
    )
    assert "Changes 1 GPU kernel file (csrc/attention/paged.cu), which" in one.insights.performance


def test_the_public_surface_a_profile_declares_is_named_in_full():
    profile = parse_profile(
        '[surface]\ncli = ["src/app/cli.py"]\nsettings = ["src/app/options.py"]\n'
        'env = ["src/app/env.py"]\nformats = ["src/app/lock.py"]\n'
    )
    files = [
        mod("src/app/cli.py", 5, 2),
        mod("src/app/options.py", 4, 1),
        mod("src/app/env.py", 3, 1),
        mod("src/app/lock.py", 2, 2),
    ]
    en = analyse_offline(commit("Rework how the app reads its inputs"), files, "en", profile=profile)
    zh = analyse_offline(commit("Rework how the app reads its inputs"), files, "zh", profile=profile)
    assert "Changes the public surface (cli, settings, env, formats)" in en.importance_reason  # no "and 1 more"
    assert "改动了公开接口（cli、settings、env、formats）" in zh.importance_reason


def test_a_rule_named_quadratic_is_not_a_blow_up_removed():
    """A code span naming a lint rule (`quadratic-list-summation`) says nothing about this change's
    complexity; the words of the message do."""
    title = "[`refurb`] Parenthesize `yield` arguments in the `FURB192` fixer (#27192)"
    body = (
        "The fix now uses the argument's own range, which is what `quadratic-list-summation` and a few other rules do."
    )
    files = [mod("crates/app/src/rules/yield_fix.rs", 12, 4)]
    en, zh = analyse_offline(commit(title, body), files, "en"), analyse_offline(commit(title, body), files, "zh")
    assert (en.importance, en.importance_reason) == (LOW, "Change with a small source change (1 file, +12/−4)")
    assert (zh.importance, zh.importance_reason) == (LOW, "其他改动，源码改动小（1 个文件，+12/−4）")
    said = analyse_offline(commit("Avoid quadratic rescans of the rule list", body), files, "en")
    assert (said.importance, said.importance_reason) == (
        MEDIUM,
        "Removes an exponential blow-up or hang that real inputs hit",
    )


# --- issue 33: a word in a title is a hint, not evidence ------------------------------------------

FORMAT_PATCH = (
    "@@ -40,6 +40,9 @@ def format_call(node):\n"
    "     parts = split(node)\n"
    "-    return join(parts)\n"
    "+    if node.hanging:\n"
    "+        return join(parts, indent=4)\n"
    "+    return join(parts)\n"
)


@pytest.mark.parametrize(
    "title",
    [
        "Fix hanging indentation of call chains",  # layout, not a program that hangs
        "Keep a hanging comma after the last argument",
        "Prefer hanging punctuation in docstrings",
    ],
)
def test_hanging_indentation_is_not_a_hang(title):
    a = analyse_offline(commit(title), [mod("src/black/linegen.py", 3, 1, FORMAT_PATCH)], "en")
    # A fix of layout code is a fix of shipped code (medium for what it is), never a hang fixed.
    assert a.importance is not HIGH, a.importance_reason
    assert a.importance is LOW or a.importance_reason.startswith("Bug fix to the code that ships"), a.importance_reason
    assert "blow-up or hang" not in a.importance_reason
    assert not any("hang" in r for r in a.risks)


def test_a_hang_is_fixed_when_the_commit_fixes_it_or_its_code_bounds_the_work():
    fixed = analyse_offline(
        commit("Fix hang on recursive aliases"), [mod("src/app/alias.py", 3, 1, FORMAT_PATCH)], "en"
    )
    assert fixed.importance is MEDIUM and "blow-up or hang" in fixed.importance_reason
    visited = (
        "@@ -10,4 +10,7 @@ def walk(node):\n+    visited = set()\n"
        "     for child in node.children:\n+        if child in visited:\n+            continue\n"
    )
    story = analyse_offline(
        commit("Traverse shared nodes once", "The traversal could revisit shared subtrees exponentially."),
        [mod("src/app/walk.py", 3, 0, visited)],
        "en",
    )
    assert story.importance is MEDIUM and "blow-up or hang" in story.importance_reason
    # the same story without code that bounds the work, by a commit that is no fix: a hint only
    plain = analyse_offline(
        commit("Traverse shared nodes in order", "The traversal could revisit shared subtrees exponentially."),
        [mod("src/app/walk.py", 3, 1, FORMAT_PATCH)],
        "en",
    )
    assert plain.importance is LOW


def test_a_body_saying_no_output_changes_is_not_input_refused(repo):
    """Issue 33: a body saying "no intended output change" was read as "starts refusing input it
    used to accept". The author says the behaviour is kept: a refactor, whatever its title says."""
    repo.commit(
        "Enforce one code path for the budget\n\nRestructures the budget check; no intended output change.",
        {"src/app/hashes.py": HASHES_V1.replace("    return True", "    ok = True\n    return ok")},
        when=WHEN,
    )
    a = analyse_last(repo)
    assert a.importance is LOW and a.change_type is T.REFACTOR, a.importance_reason
    assert "refuses" not in a.importance_reason and not a.risks


def test_crash_safety_in_a_feature_is_no_crash_fix():
    """Issue 33: "the fix only covers the reported case; other inputs may still crash" was said of a
    feature whose title mentions crash-safe sends."""
    files = [mod("handlers/slack.py", 700, 0)]
    a = analyse_offline(commit("Slack adapter: fast acks, 429 retries, crash-safe keyed sends"), files, "en")
    assert not any("crash" in r.lower() for r in a.risks)
    fix = analyse_offline(commit("Fix crash on empty Slack events"), [mod("handlers/slack.py", 300, 20)], "en")
    assert any(r.startswith("The crash fix in handlers/slack.py covers the reported case") for r in fix.risks)


def test_concurrency_risk_comes_from_the_code_not_from_words():
    """Issue 33: a concurrency warning on most commits ("thread", "async" in titles). Only code that
    shares state (a lock, a spawned task, a pool) brings it, naming where."""
    plain = "@@ -1,2 +1,47 @@ def reply(thread):\n" + "+    text = thread.text\n" * 45
    words = analyse_offline(
        commit("Add thread replies that carry their async language"), [mod("bot/replies.py", 45, 0, plain)], "en"
    )
    assert words.importance is MEDIUM
    assert not any("oncurren" in r or "threads or tasks" in r for r in words.risks)
    locked = plain + "+    with threading.Lock():\n+        pass\n"
    code = analyse_offline(commit("Add a single writer for replies"), [mod("bot/replies.py", 47, 0, locked)], "en")
    assert code.importance is MEDIUM
    assert any(r.startswith("The changed code in bot/replies.py shares state between threads") for r in code.risks)
    # a lock moved from one module to another is no new shared state
    moved = [
        mod("bot/a.py", 0, 2, "@@ -1,2 +0,0 @@\n-    with threading.Lock():\n-        pass\n"),
        mod("bot/b.py", 47, 0, locked),
    ]
    assert not any("threads or tasks" in r for r in analyse_offline(commit("Move replies"), moved, "en").risks)


def test_a_nested_default_and_a_default_read_where_it_is_used_are_one_changed_default():
    """poetry's `installer.re-resolve` true → false: a nested entry of the defaults table and the
    `config.get(…, True)` that reads it. The diff shows the default changed (no title word needed),
    said once, by its full name."""
    table = (
        '@@ -164,7 +164,7 @@ class Config:\n         "installer": {\n'
        '-            "re-resolve": True,\n+            "re-resolve": False,\n             "parallel": True,\n'
    )
    read = (
        "@@ -216,3 +216,3 @@ class Installer:\n"
        '-        reresolve = self._config.get("installer.re-resolve", True)\n'
        '+        reresolve = self._config.get("installer.re-resolve", False)\n'
    )
    files = [mod("src/poetry/config/config.py", 1, 1, table), mod("src/poetry/installation/installer.py", 1, 1, read)]
    a = analyse_offline(commit("Re-resolve only when asked"), files, "en")
    assert a.importance is HIGH  # public shipped settings (round 3)
    assert a.importance_reason == "Changes the default of installer.re-resolve (True → False)"
    assert a.summary.startswith("`installer.re-resolve` defaults to False (was True)")
