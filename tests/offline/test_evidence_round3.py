"""Issue 33 §1, round 3: the rules revised on a second blind set (two Python ML libraries whose
small fixes and experimental trainers the round-2 rules over-rated, and whose two highs — a
changed default in a config dataclass, a release removing a deprecated class — read as medium).
Each rule is a table: the case it was made for, the neighbours it must leave alone."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline, parse_title
from bot.analysis.offline.patch import field_defaults
from tests.offline.helpers import HIGH, LOW, MEDIUM, T, commit, gone, mod, new

# --- a field's default, named by its field; high in public shipped source --------------------------

FIELD_DEFAULT = (
    "@@ -486,7 +486,7 @@ class TrainerConfig(BaseConfig):\n"
    "         },\n"
    "     )\n"
    "     max_completion_length: int | None = field(\n"
    "-        default=256,\n"
    "+        default=512,\n"
    '         metadata={"help": "Maximum length of the generated completion."},\n'
    "     )\n"
)
ONE_LINE_DEFAULT = (
    "@@ -10,3 +10,3 @@ class Options:\n"
    "-    retries: int = field(default=3, metadata={})\n"
    "+    retries: int = field(default=5, metadata={})\n"
    "     timeout: float = 1.0\n"
)
HELP_ONLY = (
    "@@ -10,4 +10,4 @@ class Options:\n"
    "     retries: int = field(\n"
    "         default=3,\n"
    '-        metadata={"help": "How often."},\n'
    '+        metadata={"help": "How often to retry."},\n'
    "     )\n"
)


@pytest.mark.parametrize(
    "patch, expected",
    [
        (FIELD_DEFAULT, {"max_completion_length": ("256", "512")}),
        (ONE_LINE_DEFAULT, {"retries": ("3", "5")}),
        (HELP_ONLY, {}),  # the field's help reworded: its default is the same
        ("@@ -1,2 +1,2 @@\n-x = compute(default=1)\n+x = compute(default=2)\n", {}),  # a call, not a field
    ],
)
def test_a_fields_changed_default_is_named_by_the_field(patch, expected):
    assert field_defaults(patch) == expected


@pytest.mark.parametrize(
    "path, expected",
    [
        ("src/lib/trainer/grpo_config.py", HIGH),  # public shipped settings: every user leaving it unset
        ("src/lib/experimental/grpo_config.py", MEDIUM),  # no stability promise
        ("src/lib/_private/grpo_config.py", MEDIUM),  # not public
    ],
)
def test_a_changed_default_in_public_shipped_source_is_high(path, expected):
    a = analyse_offline(
        commit("Change default `max_completion_length` from 256 to 512"), [mod(path, 1, 1, FIELD_DEFAULT)], "en"
    )
    assert a.importance is expected
    assert "max_completion_length (256 → 512)" in a.importance_reason


def test_a_default_that_follows_a_renamed_module_stays_medium():
    rename = (
        "@@ -3,3 +3,3 @@ class Backend:\n"
        '-    kernel_name: str = field(default="mega_gemm")\n'
        '+    kernel_name: str = field(default="sm100_gemm")\n'
    )
    a = analyse_offline(
        commit("Restructure the backends"),
        [
            mod("src/lib/backends/config.py", 1, 1, rename),
            mod("src/lib/kernels/sm100_gemm.py", 0, 0, None, "renamed", "src/lib/kernels/mega_gemm.py"),
        ],
        "en",
    )
    assert a.importance is MEDIUM


# --- removals: the end of a deprecation is high; experimental code never ---------------------------

DEPRECATED_CLASS = (
    "@@ -10,9 +10,0 @@\n"
    "-class NFQuantizer:\n"
    "-    def __init__(self):\n"
    "-        warnings.warn(\n"
    '-            "NFQuantizer is deprecated and is going to be removed in 0.20.",\n'
    "-            category=DeprecationWarning,\n"
    "-        )\n"
    "-        self.table = None\n"
)
PLAIN_CLASS = "@@ -10,3 +10,0 @@\n-class NFQuantizer:\n-    def __init__(self):\n-        self.table = None\n"


@pytest.mark.parametrize(
    "title, patch, expected",
    [
        ("Remove NFQuantizer", DEPRECATED_CLASS, HIGH),  # the removal its users were warned of
        ("Release 0.20.0", PLAIN_CLASS, HIGH),  # a release commit's removal ships now
        ("Remove NFQuantizer", PLAIN_CLASS, MEDIUM),  # one name, no warning given: as before
    ],
)
def test_removing_a_deprecated_or_released_public_name_is_high(title, patch, expected):
    a = analyse_offline(commit(title), [mod("src/lib/utils/loftq.py", 0, 7, patch)], "en")
    assert a.importance is expected
    assert "NFQuantizer" in a.importance_reason


@pytest.mark.parametrize(
    "root, expected",
    [("src/lib/experimental/ssd", MEDIUM), ("src/lib/prototype/ssd", MEDIUM), ("src/lib/ssd", HIGH)],
)
def test_a_removal_in_experimental_code_is_never_high(root, expected):
    files = [
        gone(f"{root}/__init__.py", 19),
        gone(f"{root}/ssd_config.py", 263),
        gone(f"{root}/ssd_trainer.py", 533),
        mod("src/lib/trainer/base.py", 0, 1, "@@ -3,1 +3,0 @@\n-import os\n"),  # a stray line elsewhere
    ]
    assert analyse_offline(commit("Remove the SSD trainer"), files, "en").importance is expected


# --- what is no shipped-change medium: clearer errors, clean-ups, restoring reverts ----------------

GROUPS_CHECK = (
    "@@ -20,3 +20,7 @@ def update_layer(self, base):\n"
    "+        if base.groups > 1:\n"
    "+            raise ValueError(\n"
    '+                "grouped convolutions are not supported"\n'
    "+            )\n"
    "         self.weight = base.weight\n"
)
CAST = "@@ -5,3 +5,2 @@ def delta(self):\n-        w = w.to(torch.float32)\n-        w = w.float()\n         return w\n"


@pytest.mark.parametrize(
    "title, body, patch, expected",
    [
        ("FIX Raise proper error on unsupported layer type", "", GROUPS_CHECK, LOW),
        ("FIX HiRA layers with groups > 1 error", "HiRA now raises a helpful error instead.", GROUPS_CHECK, LOW),
        ("FIX Crash on grouped conv layers", "", GROUPS_CHECK, MEDIUM),  # a fix of shipped code, as before
        ("FIX Remove unnecessary dtype casts in get_delta_weight", "", CAST, LOW),
        ("FIX Drop casts that lost precision in get_delta_weight", "", CAST, MEDIUM),
    ],
)
def test_clearer_errors_and_clean_ups_are_no_shipped_change_medium(title, body, patch, expected):
    a = analyse_offline(commit(title, body), [mod("src/lib/tuners/layer.py", 4, 2, patch)], "en")
    assert a.importance is expected, a.importance_reason


@pytest.mark.parametrize(
    "title, ctype",
    [
        ("ENH Refactor LoRA variant resolution", T.REFACTOR),
        ("FIX Remove unnecessary dtype casts", T.REFACTOR),
        ("ENH Support grouped convolutions", T.FEATURE),
        ("FIX Use the right device", T.BUGFIX),  # a verb that names no narrower kind keeps the label
    ],
)
def test_a_broad_label_over_a_restructuring_verb_is_a_refactor(title, ctype):
    assert parse_title(title).change_type is ctype


@pytest.mark.parametrize(
    "deleted, expected",
    [(0, LOW), (30, MEDIUM)],  # putting a removed trainer back takes nothing from anyone
)
def test_a_revert_that_only_restores_code_is_low(deleted, expected):
    body = "+x = 1\n" * 40 + "-y = 2\n" * deleted
    patch = f"@@ -1,{deleted} +1,40 @@\n{body}"
    files = [mod("src/lib/ssd/trainer.py", 40, deleted, patch)]
    assert analyse_offline(commit('Revert "Remove the SSD trainer"'), files, "en").importance is expected


# --- what is medium: deprecations, releases, supported dependency versions --------------------------

DEPRECATION = (
    "@@ -40,2 +40,8 @@ def __post_init__(self):\n"
    "         super().__post_init__()\n"
    "+        if self.lmbda != 1.0:\n"
    "+            warnings.warn(\n"
    '+                "`lmbda` is deprecated and will be removed.",\n'
    "+                FutureWarning,\n"
    "+            )\n"
)
WARNING = DEPRECATION.replace("is deprecated and will be removed", "is large").replace("FutureWarning", "UserWarning")


@pytest.mark.parametrize("patch, expected", [(DEPRECATION, MEDIUM), (WARNING, LOW)])
def test_adding_a_deprecation_to_shipped_code_is_medium(patch, expected):
    a = analyse_offline(commit("Deprecate `lmbda` mixing"), [mod("src/lib/distill/config.py", 6, 0, patch)], "en")
    assert a.importance is expected


@pytest.mark.parametrize(
    "version, expected",
    [("1.9.0", MEDIUM), ("1.10.0.dev0", LOW)],  # a development version ships nothing
)
def test_a_release_commit_touching_only_version_files_is_medium(version, expected):
    files = [
        mod("VERSION", 1, 1, f"@@ -1 +1 @@\n-1.9.0.dev0\n+{version}\n"),
        mod(".github/workflows/tests.yml", 1, 1, "@@ -3 +3 @@\n-  ref: v1.8-release\n+  ref: v1.9-release\n"),
    ]
    assert analyse_offline(commit("Release: v1.9"), files, "en").importance is expected


@pytest.mark.parametrize(
    "patch, expected",
    [
        ('     "pytest",\n+    # on Python 3.14 triton warns\n+    "ignore:AnnAssign:DeprecationWarning",\n', LOW),
        ('-    "Programming Language :: Python :: 3.13",\n+    "Programming Language :: Python :: 3.14",\n', MEDIUM),
    ],
)
def test_a_runtime_the_title_names_has_to_be_in_the_diff_outside_comments(patch, expected):
    files = [mod("pyproject.toml", 2, 1, f"@@ -80,3 +80,4 @@ filterwarnings = [\n{patch}")]
    a = analyse_offline(commit("Filter triton DeprecationWarning on Python 3.14"), files, "en")
    assert a.importance is expected


EXTRA = (
    "@@ -80,7 +80,7 @@ test = [\n"
    '     "pytest"\n'
    " ]\n"
    " vllm = [\n"
    '-    "vllm>=0.16.0,<=0.24.0",\n'
    '+    "vllm>=0.16.0,<=0.25.1",\n'
    '     "fastapi",\n'
)


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Add support for vLLM 0.25.0 and 0.25.1", MEDIUM),
        ("Tidy the extras", LOW),  # the title says nothing about which versions work
    ],
)
def test_a_supported_dependency_range_the_title_names_is_medium(title, expected):
    files = [mod("pyproject.toml", 1, 1, EXTRA), new("docs/vllm.md", 1)]
    assert analyse_offline(commit(title), files, "en").importance is expected


def test_an_optional_extras_array_lists_dependencies_whatever_its_name():
    floor = EXTRA.replace("0.24.0", "0.25.1").replace('+    "vllm>=0.16.0', '+    "vllm>=0.17.0')
    a = analyse_offline(commit("Drop vLLM 0.16 support"), [mod("pyproject.toml", 1, 1, floor)], "en")
    assert a.importance is MEDIUM and "vllm" in a.importance_reason


@pytest.mark.parametrize(
    "title, ctype",
    [
        ("Accept a `prompt` column alongside `messages`", T.FEATURE),
        ("Record rollout traces to trackio", T.FEATURE),
        ("Validate the teacher by vocabulary size", T.FEATURE),
        ("Raise when the reference log-probs cannot be precomputed", T.FEATURE),
    ],
)
def test_verbs_that_add_behaviour_name_a_feature(title, ctype):
    assert parse_title(title).change_type is ctype


def test_a_feature_that_only_makes_an_error_clearer_is_no_shipped_change_medium():
    a = analyse_offline(
        commit("ENH Raise a clearer error for grouped layers"),
        [mod("src/lib/tuners/layer.py", 4, 0, GROUPS_CHECK)],
        "en",
    )
    assert a.importance is LOW


MID_DOCSTRING = (
    "@@ -30,7 +30,9 @@ class EMACallback(TrainerCallback):\n"
    "         bias_power (`float`, *optional*, defaults to `0.2`):\n"
    "-            Power for the scaling factor. To disable it, set this to `0.0`.\n"
    "+            Power for the scaling factor. A large value (e.g.\n"
    "+            `8.0`) makes  \\\\( \\alpha_t \\\\) decay to `0`; `0.0`\n"
    "+            instead pins it at `1` for every step.\n"
    "         lag (`int`, *optional*, defaults to `10`):\n"
)


@pytest.mark.parametrize(
    "patch, expected",
    [
        (MID_DOCSTRING, LOW),  # a hunk inside a docstring whose quotes it does not show
        ("@@ -3,2 +3,2 @@ def power(x):\n-    return x ** 2\n+    return x ** 3\n", MEDIUM),
    ],
)
def test_docstring_text_without_its_quotes_is_not_code(patch, expected):
    files = [mod("src/lib/callbacks.py", 3, 1, patch)]
    assert analyse_offline(commit("Fix the EMACallback bias_power docstring"), files, "en").importance is expected


def test_a_removed_class_named_deprecated_warned_nobody():
    """Removing unused code that happens to define a `Deprecated` warning class ends no deprecation."""
    patch = (
        "@@ -240,8 +240,4 @@ UNSTABLE: set[Preview] = {\n"
        "-class Deprecated(UserWarning):\n"
        '-    """Visible deprecation warning."""\n'
        "-def is_function_or_class(node):\n"
        "-    return node.type in KINDS\n"
    )
    a = analyse_offline(commit("Remove unused internal code"), [mod("src/lib/mode.py", 0, 4, patch)], "en")
    assert a.importance is MEDIUM
