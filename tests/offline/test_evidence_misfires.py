"""Issue 33, round 2: misfires seen on two inference libraries the rules had never read, as general
rules — test folders and their configs, CI images, manifests that are not dependency lists, renamed
and aliased definitions, GPU kernel-language helpers, exact pins — and the highs a reader would
not miss: output that was silently wrong, an interface its body says changes under its callers."""

from __future__ import annotations

import pytest

from bot.analysis.offline import FileKind, analyse_offline, classify_path
from tests.offline.helpers import HIGH, LOW, MEDIUM, T, commit, mod, new

# --- test folders and their configs ---------------------------------------------------------------


@pytest.mark.parametrize(
    "path,kind",
    [
        ("autotest/configs/Qwen/Qwen3.5-35B-A3B.yml", FileKind.TEST),
        ("autotest/utils/config_utils.py", FileKind.TEST),
        ("integration_tests/test_serve.py", FileKind.TEST),
        ("e2e-tests/run.py", FileKind.TEST),
        ("test_utils/fixtures.py", FileKind.TEST),
        ("src/_pytest/python.py", FileKind.SOURCE),
        ("latest/model.py", FileKind.SOURCE),
        ("contest/solve.py", FileKind.SOURCE),
    ],
)
def test_folders_named_for_tests_hold_tests(path, kind):
    assert classify_path(path) is kind


def test_a_test_config_is_not_a_changed_default():
    patch = "@@ -3,3 +3,3 @@\n model: Qwen3.5\n-cache-max-entry-count: 0.9\n+cache-max-entry-count: 0.7\n tp: 1\n"
    a = analyse_offline(
        commit("TEST: update ascend and mtp test config (#4659)"),
        [mod("autotest/configs/Qwen/Qwen3.5-397B-A17B.yml", 1, 1, patch), mod("autotest/utils/run.py", 4, 1)],
        "en",
    )
    assert (a.change_type, a.importance) == (T.TESTS, LOW), a.importance_reason
    assert "default" not in a.importance_reason
    assert not a.risks


# --- CI images and manifests ----------------------------------------------------------------------

DOCKERFILE = (
    "@@ -9,6 +9,8 @@ RUN apt-get update\n # Install python\n+ENV FLASHINFER_PYTHON_ENV=flashinfer\n"
    "+COPY .python-version /install/.python-version\n COPY docker/install/install_python.sh /install/\n"
    '-RUN bash /install/install_python.sh /opt/conda py312\n+RUN bash /install/install_python.sh /opt/conda "$ENV" || exit 1\n'
)


@pytest.mark.parametrize(
    "title,expected",
    [
        ("ci: centralize minimum Python version at 3.10 (#4464)", LOW),  # the CI's images
        ("[CI] Pin the Python of the images", LOW),
        ("build: move the image to Python 3.10", MEDIUM),  # the image users pull
        ("Move the image to Python 3.10", MEDIUM),
    ],
)
def test_images_of_a_commit_labelled_ci_are_the_cis(title, expected):
    a = analyse_offline(commit(title), [mod("docker/Dockerfile.cu126", 3, 1, DOCKERFILE)], "en")
    assert a.importance is expected, a.importance_reason
    assert "exit" not in a.summary and not any("exit" in r for r in a.risks)  # `exit 1` is no dependency
    # A CI label does not hide shipped code changed beside the images.
    code = mod("pkg/decode.py", 1, 1, "@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n")
    both = analyse_offline(commit(title), [mod("docker/Dockerfile.cu126", 3, 1, DOCKERFILE), code], "en")
    assert "Dockerfile" in both.importance_reason and both.importance is MEDIUM


PACKAGE_DATA = (
    '@@ -80,6 +80,11 @@ exclude = ["a*"]\n   "*.hpp",\n ]\n'
    '+"flashinfer.moe_ep.kernel_src.sm90" = [\n+  "*.md",\n+  "src/a2a/*.cu",\n+  "src/fp8_gemm/*.cuh",\n+]\n'
)


def test_package_data_globs_are_not_dependencies():
    a = analyse_offline(commit("feat: ship the kernel sources"), [mod("pyproject.toml", 5, 0, PACKAGE_DATA)], "en")
    assert "dependenc" not in a.summary, a.summary
    assert not any("src/a" in r for r in a.risks)
    # A test group's array is still a dependency list, of development only.
    patch = '@@ -76,3 +76,3 @@ ruff-lsp-test = [\n     "packaging>=23.1",\n-    "pytest>=7.3.1,<8",\n+    "pytest>=9.0.3,<10",\n'
    dev = analyse_offline(commit("Update dependency pytest to v9 (#27881)"), [mod("pyproject.toml", 1, 1, patch)], "en")
    assert dev.importance is LOW, dev.importance_reason


@pytest.mark.parametrize(
    "patch,expected,named",
    [
        (
            '@@ -6,2 +6,3 @@\n aiohttp\n+apache-tvm-ffi==0.1.11; sys_platform == "linux"\n-tilelang; sys_platform == "linux"\n+tilelang==0.1.11; sys_platform == "linux"\n',
            MEDIUM,
            "`tilelang` ==0.1.11",
        ),
        ("@@ -1,1 +1,1 @@\n-torch==2.8.0\n+torch==2.9.0\n", LOW, "`torch` 2.8.0 → 2.9.0"),  # pinned before too
        ("@@ -1,1 +1,1 @@\n-xgrammar\n+xgrammar>=0.1.33\n", LOW, "`xgrammar` → 0.1.33"),  # a floor, not a pin
    ],
)
def test_a_shipped_dependency_pinned_to_one_version(patch, expected, named):
    a = analyse_offline(
        commit("freeze tilelang version (#4669)"), [mod("requirements/runtime_cuda.txt", 2, 1, patch)], "en"
    )
    assert a.importance is expected, a.importance_reason
    assert named in a.summary, a.summary
    if expected is MEDIUM:
        assert "tilelang==0.1.11" in a.importance_reason
        assert any("tilelang==0.1.11" in r for r in a.risks)
        assert (
            "锁定"
            in analyse_offline(commit("freeze"), [mod("requirements/runtime_cuda.txt", 2, 1, patch)], "zh").summary
        )
        # the same pin in a docs requirements file ships nothing
        assert analyse_offline(commit("pin"), [mod("requirements/docs.txt", 2, 1, patch)], "en").importance is LOW


# --- renamed, aliased, kernel-language definitions ----------------------------------------------

RENAMED = (
    "@@ -58,8 +58,8 @@ torch2cute = {\n \n @flashinfer_api\n-def bsa_attn_fwd(\n+def bsa_attn_sm100_blk128_fwd(\n"
    "     q: torch.Tensor,\n     k: torch.Tensor,\n"
)
REWRITTEN = "@@ -1,4 +1,2 @@\n-def resolve(spec):\n+def other(spec):\n-    return solve(spec)\n+    return None\n"
ALIASED = RENAMED + "@@ -300,0 +300,1 @@\n+bsa_attn_fwd = bsa_attn_sm100_blk128_fwd  # the old name\n"


@pytest.mark.parametrize(
    "patch,removed,renamed",
    [
        (RENAMED, False, True),  # the body goes on: renamed, not removed
        (REWRITTEN, True, False),  # the body goes too: removed
        (ALIASED, False, False),  # the old name is kept: nothing breaks
    ],
)
def test_renamed_and_aliased_definitions(patch, removed, renamed):
    a = analyse_offline(commit("integrate SM120 VSA backend"), [mod("flashinfer/sparse/bsa.py", 2, 2, patch)], "en")
    assert ("Removes public definitions" in a.importance_reason) is removed, a.importance_reason
    assert ("Renames public definitions" in a.importance_reason) is renamed, a.importance_reason
    if renamed:
        assert "bsa_attn_fwd → bsa_attn_sm100_blk128_fwd" in a.importance_reason
        assert a.importance is MEDIUM
        assert any("bsa_attn_fwd" in r for r in a.recommendations)


def test_renames_never_make_a_commit_high_by_their_number():
    patch = "".join(
        f"@@ -{i * 10},3 +{i * 10},3 @@\n-def old{i}(x):\n+def new{i}(x):\n     return x\n" for i in range(1, 7)
    )
    a = analyse_offline(commit("Rename the kernels"), [mod("pkg/api.py", 6, 6, patch)], "en")
    assert a.importance is MEDIUM, a.importance_reason
    gone = "".join(f"@@ -{i * 10},2 +{i * 10},0 @@\n-def old{i}(x):\n-    return x\n" for i in range(1, 7))
    assert analyse_offline(commit("Drop the kernels"), [mod("pkg/api.py", 0, 12, gone)], "en").importance is HIGH


@pytest.mark.parametrize(
    "decorator,removed",
    [
        ("@T.macro", False),
        ("@triton.jit", False),
        ("@cute.jit", False),
        ("@functools.cache", True),
        ("@torch.compile", True),
    ],
)
def test_gpu_kernel_language_functions_are_not_api(decorator, removed):
    patch = f"@@ -8,4 +8,0 @@\n-{decorator}\n-def vec_store_state(state, h):\n-    state[0] = h\n-    return state\n"
    a = analyse_offline(commit("update the state layout"), [mod("pkg/kernels/gated.py", 0, 4, patch)], "en")
    assert ("vec_store_state" in a.importance_reason) is removed, a.importance_reason


# --- highs a reader would not miss ----------------------------------------------------------------

FIX = "@@ -40,3 +40,3 @@ void reduce(int q) {\n   int i = idx;\n-  int o = i * q;\n+  int o = base + i * q;\n"
CORRUPTED = (
    "Fix two reduction indexing errors.\n\n### Observed failure\n\nWith batch size greater than one, requests after "
    "the first receive corrupted attention output. This produces incorrect logits."
)


@pytest.mark.parametrize(
    "title,body,expected",
    [
        ("fix: correct reduction indexing for decode at long q_len", CORRUPTED, HIGH),
        ("Fix wrong results of the batched solver", "", HIGH),
        ("fix: recover from a corrupted cache file", "", MEDIUM),  # a corrupt input coped with
        ("feat: port the GEMM", "A race could corrupt the output tile; fixed here.", MEDIUM),  # a feature
        ("fix: reduction indexing", "", MEDIUM),
    ],
)
def test_a_fix_of_silently_wrong_output_is_high(title, body, expected):
    files = [mod("csrc/fmhaReduction.cu", 1, 1, FIX)]
    a = analyse_offline(commit(title, body), files, "en")
    assert a.importance is expected, a.importance_reason
    if expected is HIGH:
        assert "silently wrong" in a.importance_reason
        assert any("may be wrong" in r for r in a.risks)
        assert "静默" in analyse_offline(commit(title, body), files, "zh").importance_reason
    # the words alone are a hint: a comment-only diff bears nothing out
    comment = [mod("csrc/fmhaReduction.cu", 1, 1, "@@ -1,1 +1,1 @@\n-// index\n+// the index\n")]
    assert analyse_offline(commit(title, body), comment, "en").importance is not HIGH


INTERFACE = (
    "## Description\n\nThe fused MoE interface previously required slots 1 and 4 to hold one value per "
    "routed row.\n\nThis PR changes the two residual inputs to use rank-local expert order:\n\n"
    "- Slot 1: FC1 residual scale with shape `[num_local_experts]`."
)


@pytest.mark.parametrize(
    "body,path,expected",
    [
        (INTERFACE, "flashinfer/fused_moe/core.py", HIGH),
        ("Callers must update their calls to `run`.", "flashinfer/fused_moe/core.py", HIGH),
        (
            "Route the loads through a helper without changing the public HCA API to callers.",
            "flashinfer/hca.py",
            MEDIUM,
        ),
        (INTERFACE, "flashinfer/_internal/core.py", MEDIUM),  # off the public surface
        (INTERFACE, "tests/moe/test_core.py", LOW),  # nothing that ships
    ],
)
def test_a_body_that_says_callers_must_change_is_high(body, path, expected):
    files = [mod(path, 1, 1, "@@ -1,2 +1,2 @@ def run(x, scales):\n-    s = scales[row]\n+    s = scales[expert]\n")]
    a = analyse_offline(commit("fix(moe): use per-expert residual scales", body), files, "en")
    assert a.importance is expected, a.importance_reason
    if expected is HIGH:
        assert "callers" in a.importance_reason
        assert a.risks and "callers" in a.risks[0]


# --- the generic GPU risk -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "title,files,shown",
    [
        ("perf: fuse the reduction", [mod("csrc/reduce.cu", 1, 1, FIX)], True),
        ("fix: the reduction index", [mod("csrc/reduce.cu", 1, 1, FIX)], False),  # a fix is meant to change results
        ("perf: add a fused kernel", [new("csrc/fused.cu", 40, "@@ -0,0 +1,1 @@\n+int main() { return 0; }\n")], False),
        ("perf: reword the kernel comments", [mod("csrc/reduce.cu", 1, 1, "@@ -1,1 +1,1 @@\n-// a\n+// b\n")], False),
    ],
)
def test_the_gpu_kernel_risk_is_for_speed_ups_and_rewrites_of_kernels_that_ran(title, files, shown):
    a = analyse_offline(commit(title), files, "en")
    assert any("GPU kernels change" in r for r in a.risks) is shown, a.risks
