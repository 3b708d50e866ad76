"""The offline analyser: table tests over real vLLM titles (with the level a careful LLM gave them in
/work/shared/reference/vllm-2026-01-28.md), conventional commits, size on source vs tests,
non-code-only commits, breaking markers, reverts, both languages.

The file lists of the vLLM commits are reconstructed from the reference report's own description of
each commit (paths and rough sizes it names); they stand in for what GitHub returns.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from bot.analysis.offline import (
    RULES_VERSION, FileKind, analyse_offline, classify_path, first_paragraph, is_major_bump,
    parse_title,
)
from bot.models import ChangeType, Commit, Coverage, FileChange, Importance

HIGH, MEDIUM, LOW = Importance.HIGH, Importance.MEDIUM, Importance.LOW
T = ChangeType


def commit(title: str, body: str = "", **kw) -> Commit:
    return Commit(repo="vllm-project/vllm", sha="af9b69f977bd1166ed63c46f9ccbd3a02344ae4f", title=title,
                  body=body, author="Robert Shaw", committed_at=datetime(2026, 1, 28, 15, 54, tzinfo=timezone.utc),
                  **kw)


def mod(path: str, add: int = 0, dele: int = 0, patch: str | None = None, status: str = "modified",
        previous_path: str | None = None) -> FileChange:
    return FileChange(path=path, status=status, additions=add, deletions=dele, patch=patch,
                      previous_path=previous_path)


def new(path: str, add: int, patch: str | None = None) -> FileChange:
    return mod(path, add, 0, patch, status="added")


def gone(path: str, dele: int, patch: str | None = None) -> FileChange:
    return mod(path, 0, dele, patch, status="removed")


def removed_patch(*lines: str) -> str:
    return f"@@ -1,{len(lines)} +0,0 @@\n" + "\n".join("-" + ln for ln in lines)


# --- the vLLM day of 2026-01-28 ---------------------------------------------------------------
# (title, files, reference level, our level, our type). Where we deliberately disagree with the
# reference level, the comment says why.
VLLM_DAY = [
    ("[Quantization][Deprecation] Remove Marlin 24 (#32688)", [
        gone("csrc/quantization/marlin/sparse/marlin_24_cuda_kernel.cu", 1090),
        gone("csrc/quantization/marlin/sparse/common/base.h", 58),
        gone("csrc/quantization/marlin/sparse/common/mma.h", 120),
        gone("csrc/quantization/marlin/sparse/common/mem.h", 110),
        gone("csrc/quantization/marlin/sparse/LICENSE", 200),
        mod("CMakeLists.txt", 0, 3),
        mod("csrc/torch_bindings.cpp", 0, 9),
        mod("vllm/_custom_ops.py", 0, 38),
        gone("vllm/model_executor/layers/quantization/gptq_marlin_24.py", 296, removed_patch(
            "class GPTQMarlin24Config(QuantizationConfig):", "    def get_name(cls):", "        pass")),
        mod("vllm/model_executor/layers/quantization/__init__.py", 0, 4),
        gone("tests/kernels/quantization/test_marlin_24.py", 160),
        mod("benchmarks/kernels/benchmark_marlin.py", 2, 50),
    ], HIGH, HIGH, T.REMOVAL),
    ("[Quantization][Deprecation] Remove BitBlas (#32683)", [
        gone("vllm/model_executor/layers/quantization/bitblas.py", 460),
        gone("vllm/model_executor/layers/quantization/gptq_bitblas.py", 480),
        gone("vllm/model_executor/layers/quantization/utils/bitblas_utils.py", 220),
        gone("vllm/model_executor/kernels/mixed_precision/bitblas.py", 300),
        mod("vllm/model_executor/layers/linear.py", 1, 12),
        mod("vllm/config/model.py", 0, 4),
        gone("docs/features/quantization/bitblas.md", 60),
        gone("tests/models/quantization/test_bitblas.py", 70),
    ], HIGH, HIGH, T.REMOVAL),
    # Reference: high. Ours: medium — a new model is 1,100 lines of new code, but nothing existing
    # changes for anyone not using it; size alone never makes a commit high.
    ("Adds FunAudioChat multimodal audio model support (#2) (#33058)", [
        new("vllm/model_executor/models/funaudiochat.py", 980),
        new("vllm/transformers_utils/configs/funaudiochat.py", 140),
        mod("vllm/model_executor/models/registry.py", 1),
        mod("vllm/multimodal/audio.py", 4, 1),
        mod("examples/offline_inference/audio_language.py", 40),
        mod("docs/models/supported_models.md", 1),
        mod("tests/models/registry.py", 3),
    ], HIGH, MEDIUM, T.FEATURE),
    # Reference: high. Ours: low — about 3,000 new lines, but all of them benchmark tooling
    # under benchmarks/: nothing a vLLM user runs changes (tooling-only commits are low).
    ("Add attention benchmarking tools (#26835)", [
        new("benchmarks/attention_benchmarks/benchmark.py", 900),
        new("benchmarks/attention_benchmarks/runner.py", 700),
        new("benchmarks/attention_benchmarks/mla_runner.py", 800),
        new("benchmarks/attention_benchmarks/common.py", 400),
        new("benchmarks/attention_benchmarks/configs/mla_decode.yaml", 60),
        new("benchmarks/attention_benchmarks/README.md", 200),
    ], HIGH, LOW, T.FEATURE),
    ("[Misc] Provide a DeepSeek ReasoningParser with thinking enabled by default (#33221)", [
        mod("vllm/reasoning/deepseek_v3_reasoning_parser.py", 40, 2),
        mod("vllm/reasoning/__init__.py", 4, 12),
        gone("vllm/reasoning/holo2_reasoning_parser.py", 35),
        gone("vllm/reasoning/glm4_moe_reasoning_parser.py", 30),
        gone("vllm/reasoning/kimi_k2_reasoning_parser.py", 32),
        mod("tests/reasoning/test_holo2_reasoning_parser.py", 3, 3),
    ], MEDIUM, MEDIUM, T.FEATURE),
    ('Revert "Enable Cross layers KV cache layout at NIXL Connector (#30207)" (#33241)', [
        mod("vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py", 20, 120),
        mod("vllm/config/kv_transfer.py", 0, 12),
        mod("docs/features/nixl_connector_usage.md", 0, 20),
        mod("tests/v1/kv_connector/unit/test_nixl_connector.py", 5, 60),
    ], MEDIUM, MEDIUM, T.REVERT),
    # Reference: medium. Ours: low — typing fixes to satisfy mypy, no behaviour change.
    ("[CI] Enable mypy import following for `vllm/compilation` (#33199)", [
        mod("tools/pre_commit/mypy.py", 2, 1),
        *[mod(f"vllm/compilation/{name}.py", 5, 4) for name in
          ("backends", "decorators", "fusion", "pass_manager", "wrapper", "counter", "monitor")],
    ], MEDIUM, LOW, T.CI_BUILD),
    ("[ROCm] Enabling forward_includes_kv_cache on ROCm MHA backends (#33106)", [
        mod("vllm/v1/attention/backends/rocm_attn.py", 38, 12),
        mod("vllm/v1/attention/backends/rocm_aiter_fa.py", 14, 6),
        mod("vllm/platforms/rocm.py", 4, 1),
    ], MEDIUM, MEDIUM, T.FEATURE),
    # Reference: medium. Ours: low — a lint rule and mechanical string fixes.
    ("Add flake8-implicit-str-concat rules to Ruff (#33191)", [
        mod("pyproject.toml", 1),
        *[mod(f"vllm/entrypoints/module_{i}.py", 3, 3) for i in range(20)],
        *[mod(f"tests/entrypoints/test_module_{i}.py", 2, 2) for i in range(10)],
        mod("examples/online_serving/openai_chat_completion_client.py", 2, 2),
    ], MEDIUM, LOW, T.FEATURE),
    ("[torch.compile] Speed up MOE handling in forward_context (#33184)", [
        mod("vllm/forward_context.py", 48, 22),
        mod("vllm/model_executor/layers/fused_moe/layer.py", 18, 14),
    ], MEDIUM, MEDIUM, T.PERFORMANCE),
    ("feature: support eagle3 for HunyuanVL & Hunyuan (#33035)", [
        mod("vllm/model_executor/models/hunyuan_v1.py", 32, 4),
        mod("vllm/model_executor/models/hunyuan_vision.py", 24, 2),
        mod("vllm/config/speculative.py", 3),
        mod("tests/models/registry.py", 4),
    ], MEDIUM, MEDIUM, T.FEATURE),
    ("Support compress-tensors with nvfp4 or fp8 weights and modelopt with nvfp4 weights on Turing (#33076)", [
        mod("vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py", 30, 8),
        mod("vllm/model_executor/layers/quantization/modelopt.py", 26, 6),
        mod("vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py", 20, 4),
    ], MEDIUM, MEDIUM, T.FEATURE),
    ("[CI] Update job dependency syntax for Intel and AMD jobs (#33240)", [
        mod(".buildkite/test_areas/intel.yaml", 12, 12), mod(".buildkite/test_areas/amd.yaml", 20, 20),
    ], LOW, LOW, T.CI_BUILD),
    ("[CI] Update job dependency for hardware and CPU jobs (#33237)", [
        mod(".buildkite/hardware_tests/cpu.yaml", 8, 2), mod(".buildkite/hardware_tests/arm.yaml", 6, 1),
    ], LOW, LOW, T.CI_BUILD),
    ("[XPU]disable test_acceptance_length UT (#33226)", [
        mod(".buildkite/scripts/hardware_ci/run-xpu-test.sh", 1, 1),
    ], LOW, LOW, T.CI_BUILD),
    ("[Docs] Simplify CPU x86 Docker build documentation (#33071)", [
        mod("docs/getting_started/installation/cpu.x86.inc.md", 30, 85),
    ], LOW, LOW, T.DOCS),
    # Reference: low, typed "refactor" (its low tier had no bug-fix type). Ours: bug fix, low.
    ("[Bugfix] Lazy import NgramProposer in GPU model runner (#32821)", [
        mod("vllm/v1/worker/gpu_model_runner.py", 4, 2),
    ], LOW, LOW, T.BUGFIX),
    ("Don't use `min_pixels`/`max_pixels` from Qwen2VL's processor (#33208)", [
        mod("vllm/model_executor/models/qwen2_vl.py", 10, 14),
    ], LOW, LOW, T.OTHER),
    ("Relax protobuf library version constraints (#33202)", [
        mod("requirements/common.txt", 1, 1, "@@ -40,1 +40,1 @@\n-protobuf >= 5.29.6, != 6.30.*, < 7\n+protobuf >= 5.29.6"),
        mod("requirements/build.txt", 1, 1, "@@ -3,1 +3,1 @@\n-grpcio-tools==1.68.1\n+grpcio-tools>=1.68.1"),
    ], LOW, LOW, T.DEPENDENCIES),
    ("[ROCm][CI] Add TORCH_NCCL_BLOCKING_WAIT For Distributed Tests (A100) (#32891)", [
        mod(".buildkite/scripts/hardware_ci/run-amd-test.sh", 3),
    ], LOW, LOW, T.CI_BUILD),
    # Reference: low. Ours: medium — the container image's working directory moves, which
    # breaks anyone who mounts or copies into the old path.
    ("[Feature]: Container image WORKDIR consistency (#33159)", [
        mod("docker/Dockerfile", 10, 12), mod(".buildkite/scripts/run-tests.sh", 3, 3),
    ], LOW, MEDIUM, T.FEATURE),
    ("[Docs] Use definition lists for CLI reference docs (#33186)", [
        mod("docs/mkdocs/hooks/generate_argparse.py", 20, 12), mod("mkdocs.yaml", 1),
    ], LOW, LOW, T.DOCS),
    ("[docs] Improve tlparse section (#33211)", [mod("docs/design/debug_vllm_compile.md", 14, 3)],
     LOW, LOW, T.DOCS),
    ("[CI] minor fixes to pipeline generator and tests (#33151)", [
        mod(".buildkite/scripts/generate-pipeline.sh", 10, 4), mod(".buildkite/scripts/run-distributed.sh", 2, 2),
    ], LOW, LOW, T.CI_BUILD),
    ("[Model Runner V2] Use a different stream for grammar bitmask h2d copy (#33059)", [
        mod("vllm/v1/worker/gpu/structured_outputs.py", 45, 30), mod("vllm/v1/worker/gpu/model_runner.py", 5, 1),
    ], LOW, LOW, T.REFACTOR),
    ("[Perf] Optimize dcp allocate tensor (#33102)", [mod("vllm/v1/attention/backends/mla/common.py", 2, 6)],
     LOW, LOW, T.PERFORMANCE),
    ("[Bugfix] Fix display error (inconsistent with context) (#33020)", [mod("vllm/platforms/cpu.py", 1, 1)],
     LOW, LOW, T.BUGFIX),
    ('Enabling "2 node" distributed tests in the AMD CI pipeline. (#32719)', [
        mod(".buildkite/scripts/hardware_ci/run-amd-test.sh", 60, 4), mod(".buildkite/test-amd.yaml", 20, 3),
    ], LOW, LOW, T.CI_BUILD),
    ("[Attention] Use `has_flashinfer` helper (#33177)", [
        mod("vllm/v1/attention/backends/flashinfer.py", 3, 9), mod("vllm/utils/flashinfer.py", 2, 2),
    ], LOW, LOW, T.REFACTOR),
    ("[Doc] Improve serve parameter documentation with meaningful defaults (#33082)", [
        mod("docs/mkdocs/hooks/generate_argparse.py", 9, 2),
    ], LOW, LOW, T.DOCS),
    ("[BugFix] Fix P/D with non-MoE DP (#33037)", [
        mod("vllm/v1/engine/core.py", 10, 5), mod("vllm/v1/engine/utils.py", 8, 3),
    ], LOW, LOW, T.BUGFIX),
]


@pytest.mark.parametrize("title,files,reference,expected,ctype", VLLM_DAY, ids=[row[0][:50] for row in VLLM_DAY])
def test_vllm_reference_day(title, files, reference, expected, ctype):
    a = analyse_offline(commit(title), files, "zh")
    assert (a.importance, a.change_type) == (expected, ctype), a.importance_reason
    assert a.importance_reason


def test_vllm_day_agrees_with_the_reference_on_most_commits():
    agree = sum(analyse_offline(commit(t), f, "en").importance is ref for t, f, ref, _, _ in VLLM_DAY)
    # The deliberate disagreements are commented in the table (size alone is never high,
    # tooling-only commits are low).
    assert agree >= len(VLLM_DAY) - 7


def test_removal_reason_names_the_facts_and_the_consequence():
    title, files, *_ = VLLM_DAY[0]
    zh = analyse_offline(commit(title), files, "zh")
    en = analyse_offline(commit(title), files, "en")
    assert zh.importance_reason.startswith("移除了 5 个公开源码文件中的公开 API（−1,674 行）")
    assert "下游会失效" in zh.importance_reason
    assert "Removes public API in 5 source files (−1,674 lines)" in en.importance_reason
    assert any("gptq_marlin_24.py" in r for r in zh.risks)
    assert "删除了 5 个源码文件" in zh.insights.architecture


# --- change types from titles ----------------------------------------------------------------

SRC = [mod("src/app/core.py", 12, 3)]


@pytest.mark.parametrize("title,expected", [
    ("feat: add streaming replies", T.FEATURE),
    ("feat(api)!: drop the v1 endpoints", T.FEATURE),
    ("fix(parser): handle empty bodies", T.BUGFIX),
    ("perf: cache compiled regexes", T.PERFORMANCE),
    ("refactor(core): split the scheduler", T.REFACTOR),
    ("docs: explain the cache", T.DOCS),
    ("test: cover the retry path", T.TESTS),
    ("ci: run on 3.12", T.CI_BUILD),
    ("build: switch to hatchling", T.CI_BUILD),
    ("revert: feat: add streaming replies", T.REVERT),
    ("deps: bump openai", T.DEPENDENCIES),
    ("chore(deps): bump lodash from 4.17.20 to 4.17.21", T.DEPENDENCIES),
    ("build(deps-dev): bump pytest from 7.4.0 to 8.0.0", T.DEPENDENCIES),
    ("style: reorder imports", T.REFACTOR),
    ("security: escape user names in the HTML report", T.SECURITY),
    ("[BugFix][CI] Fix flaky retry", T.BUGFIX),
    ("[ROCm][CI] Pin the runner image", T.CI_BUILD),
    ("[CI/Build] Cache wheels", T.CI_BUILD),
    ("[Performance] Fuse the two kernels", T.PERFORMANCE),
    ("[Kernel][Perf] Faster top-k", T.PERFORMANCE),
    ("[Model] Add support for Qwen3-Next", T.FEATURE),
    ("[Frontend] Fix tool-call parsing", T.BUGFIX),
    ("[Core] Refactor the block manager", T.REFACTOR),
    ("[Deprecation] Remove the legacy sampler", T.REMOVAL),
    ("[Refactor] Move helpers into utils", T.REFACTOR),
    ("[Feature] Streaming tool calls", T.FEATURE),
    ("[Test] Cover the scheduler", T.TESTS),
    ("Fix the scheduler [Bugfix]", T.BUGFIX),  # tags in any position
    ('Revert "Add streaming replies"', T.REVERT),
    ("Fix race in the cache", T.BUGFIX),
    ("Add a /health endpoint", T.FEATURE),
    ("Remove the legacy sampler", T.REMOVAL),
    ("Bump numpy from 1.26.4 to 2.0.0", T.DEPENDENCIES),
    ("Update dependency eslint to v9", T.DEPENDENCIES),
    ("Fix CVE-2025-12345 in token parsing", T.SECURITY),
    ("net/http: fix header parsing", T.BUGFIX),  # Go-style area prefix is not a type
    ("Tweak things", T.OTHER),
])
def test_change_type_from_title(title, expected):
    assert analyse_offline(commit(title), SRC, "en").change_type is expected


def test_reverts_named_by_the_source_are_reverts_whatever_the_title():
    a = analyse_offline(commit("Back out the cache change", reverts="1f33e38e81a1b29bb4261a5e4e1fa430198b251a"),
                        [mod("src/app/core.py", 30, 12)], "zh")
    assert a.change_type is T.REVERT
    assert any("1f33e38" in r for r in a.risks)


@pytest.mark.parametrize("files,expected", [
    ([mod("docs/guide.md", 30, 2), mod("README.md", 3, 1)], T.DOCS),
    ([mod("tests/test_cache.py", 40, 2), mod("tests/conftest.py", 5)], T.TESTS),
    ([mod(".github/workflows/ci.yml", 4, 1)], T.CI_BUILD),
    ([mod("CMakeLists.txt", 4, 1), mod(".github/workflows/wheels.yml", 2)], T.CI_BUILD),
    ([mod("requirements.txt", 1, 1), mod("poetry.lock", 300, 280)], T.DEPENDENCIES),
    ([mod("config/app.yaml", 3, 3)], T.CONFIG),
])
def test_change_type_from_files_when_the_title_says_nothing(files, expected):
    assert analyse_offline(commit("Update things"), files, "en").change_type is expected


def test_title_tag_wins_over_files():
    # "[Bugfix]" touching only tests is still a bug fix (of the tests) — and low.
    a = analyse_offline(commit("[Bugfix] Fix flaky scheduler test"), [mod("tests/test_sched.py", 5, 5)], "en")
    assert (a.change_type, a.importance) == (T.BUGFIX, LOW)
    # A verb, though, yields to files that are all of one kind.
    a = analyse_offline(commit("Add tests for the scheduler"), [mod("tests/test_sched.py", 120)], "en")
    assert a.change_type is T.TESTS


def test_merge_commit_reads_the_pr_title_from_the_body():
    a = analyse_offline(commit("Merge pull request #12 from alice/fix-cache", "Fix stale cache entries\n\nDetails."),
                        SRC, "en")
    assert a.change_type is T.BUGFIX


# --- size on source code only ----------------------------------------------------------------

def test_size_counts_source_not_tests_docs_or_lockfiles():
    small_src = [mod("src/app/core.py", 20, 5)]
    padding = [mod("tests/test_core.py", 900, 100), mod("docs/core.md", 400),
               mod("package-lock.json", 5000, 4000), mod("src/app/api_pb2.py", 800, 700)]
    a = analyse_offline(commit("fix: handle empty bodies"), small_src + padding, "en")
    assert a.importance is LOW
    assert "(1 file, +20/−5)" in a.importance_reason
    assert (a.files_changed, a.additions, a.deletions) == (5, 7120, 4805)  # totals still reported


@pytest.mark.parametrize("title,lines,expected", [
    ("feat: add retries", 20, LOW),      # a tiny feat is not automatically high
    ("feat: add retries", 120, MEDIUM),
    ("feat: add retries", 700, MEDIUM),  # size alone is never high
    ("fix: handle empty bodies", 60, LOW),
    ("fix: handle empty bodies", 250, LOW),
    ("fix: handle empty bodies", 900, MEDIUM),
    ("refactor: split the scheduler", 400, LOW),
    ("refactor: split the scheduler", 700, MEDIUM),
    ("perf: cache compiled regexes", 60, MEDIUM),
])
def test_size_thresholds_on_source(title, lines, expected):
    files = [mod("src/app/core.py", lines // 2, lines - lines // 2), mod("tests/test_core.py", 30)]
    assert analyse_offline(commit(title), files, "en").importance is expected


def test_the_same_lines_in_tests_only_stay_low():
    a = analyse_offline(commit("feat: add retries"), [mod("tests/test_core.py", 700), mod("tests/test_io.py", 300)], "en")
    assert a.importance is LOW
    assert a.importance_reason == "Test-only change (2 files); no runtime code touched"


def test_many_source_files_is_medium_even_when_each_change_is_small():
    files = [mod(f"src/app/m{i}.py", 2, 1) for i in range(22)]
    a = analyse_offline(commit("Update call sites"), files, "en")
    assert a.importance is MEDIUM
    assert "22 source files" in a.importance_reason


def test_commit_totals_are_used_when_the_file_list_is_missing():
    a = analyse_offline(commit("feat: add retries", additions=400, deletions=20, files_changed=6), [], "en")
    assert (a.files_changed, a.additions, a.deletions) == (6, 400, 20)
    assert a.importance is MEDIUM
    assert "file list unavailable" in a.importance_reason
    bare = analyse_offline(commit("docs: typo"), [], "zh")
    assert bare.importance is LOW and bare.importance_reason.startswith("未获取到改动文件")


# --- non-code-only commits ---------------------------------------------------------------------

@pytest.mark.parametrize("lang,reason", [("en", "Docs-only change (2 files); no runtime code touched"),
                                         ("zh", "仅改动文档（2 个文件），不影响运行时代码")])
def test_docs_only_is_low_whatever_the_title(lang, reason):
    files = [mod("docs/architecture.md", 900, 300), mod("README.md", 40, 10)]
    a = analyse_offline(commit("feat!: document the new plugin API"), files, lang)
    assert (a.importance, a.change_type) == (LOW, T.FEATURE)
    assert a.importance_reason == reason
    assert a.risks == () and a.recommendations == () and a.impact == ""


def test_lockfile_only_is_low_dependencies():
    a = analyse_offline(commit("Update things"), [mod("poetry.lock", 812, 640), mod("frontend/yarn.lock", 90, 80)], "zh")
    assert (a.importance, a.change_type) == (LOW, T.DEPENDENCIES)
    assert a.importance_reason == "仅更新锁文件（poetry.lock、frontend/yarn.lock），依赖声明未变"


def test_ci_only_is_low():
    a = analyse_offline(commit("Rework the release workflow"), [mod(".github/workflows/release.yml", 300, 200)], "en")
    assert (a.importance, a.change_type) == (LOW, T.CI_BUILD)
    assert a.importance_reason.startswith("CI-only change (1 file)")


def test_typo_and_lint_changes_are_low():
    a = analyse_offline(commit("Fix typo in error message"), [mod("src/app/errors.py", 1, 1)], "en")
    assert a.importance is LOW
    assert a.importance_reason.startswith("Formatting, spelling or lint change")
    big = analyse_offline(commit("style: reformat with ruff"), [mod(f"src/m{i}.py", 40, 40) for i in range(30)], "en")
    assert big.importance is MEDIUM  # 2,400 lines of churn: conflicts, not behaviour
    assert "conflict" in big.importance_reason


# --- facts that raise importance ---------------------------------------------------------------

@pytest.mark.parametrize("title,body", [
    ("feat!: rename the config keys", ""),
    ("refactor(api)!: drop positional arguments", ""),
    ("Rework the plugin loader", "Plugins now load lazily.\n\nBREAKING CHANGE: `load_all()` is gone."),
    ("[Core] Breaking: plugins must declare a version", ""),
])
def test_breaking_markers_are_high(title, body):
    a = analyse_offline(commit(title, body), [mod("src/app/plugins.py", 6, 2)], "en")
    assert a.importance is HIGH
    assert "breaking change" in a.importance_reason
    assert any("breaking change" in r for r in a.risks)


@pytest.mark.parametrize("title,body", [
    ("Make the loader non-breaking for old plugins", ""),
    ("Rework the plugin loader", "## Type\n- [ ] Breaking change\n- [x] Bug fix"),
])
def test_negated_or_unticked_breaking_is_not_a_marker(title, body):
    assert analyse_offline(commit(title, body), [mod("src/app/plugins.py", 6, 2)], "en").importance is LOW


def test_revert_is_at_least_medium_and_says_what_to_check():
    a = analyse_offline(commit('Revert "Use a faster JSON encoder" (#812)'), [mod("src/app/encode.py", 10, 25)], "zh")
    assert (a.change_type, a.importance) == (T.REVERT, MEDIUM)
    assert "回滚了已合入的改动「Use a faster JSON encoder」" in a.importance_reason
    assert any("被回滚的改动" in r for r in a.risks)
    assert any("重新合入" in r for r in a.recommendations)


def test_revert_of_docs_is_still_low():
    a = analyse_offline(commit('Revert "Fix typo in README"'), [mod("README.md", 1, 1)], "en")
    assert (a.change_type, a.importance) == (T.REVERT, LOW)


def test_security_fix_is_high_and_security_paths_are_noticed():
    a = analyse_offline(commit("Fix CVE-2025-12345: reject unsigned tokens"), [mod("src/app/auth/jwt.py", 8, 2)], "en")
    assert a.importance is HIGH
    assert "CVE-2025-12345" in a.importance_reason
    assert "CVE-2025-12345" in a.insights.security and "src/app/auth/jwt.py" in a.insights.security
    touched = analyse_offline(commit("Fix session expiry"), [mod("src/app/auth/session.py", 8, 2)], "en")
    assert touched.importance is MEDIUM
    assert "security-sensitive" in touched.importance_reason
    # Restructuring code under auth/ (avoiding clones, renaming) is not a security change.
    tidy = analyse_offline(commit("Tidy session handling"), [mod("src/app/auth/session.py", 8, 2)], "en")
    assert tidy.importance is LOW and "security" not in tidy.importance_reason
    # 'tokenizer' is not a security path
    assert analyse_offline(commit("Tidy tokenizer"), [mod("src/app/tokenizer.py", 8, 2)], "en").importance is LOW


def test_security_claims_versus_mentions():
    # "security" alone is noted (medium), not a claimed fix; a docs-only security page stays docs.
    mention = analyse_offline(commit("[Frontend] Add security headers option"), [mod("src/app/server.py", 20, 2)], "en")
    assert (mention.change_type, mention.importance) == (T.FEATURE, MEDIUM)
    assert "mentions security" in mention.importance_reason
    policy = analyse_offline(commit("Fix security advisory link"), [mod("SECURITY.md", 1, 1)], "en")
    assert (policy.change_type, policy.importance) == (T.DOCS, LOW)
    xss = analyse_offline(commit("[Bugfix] Fix XSS in the HTML report"), [mod("src/app/report.py", 3, 1)], "zh")
    assert (xss.change_type, xss.importance) == (T.SECURITY, HIGH)
    assert xss.importance_reason == "安全修复，受影响版本应尽快升级"


def test_revert_of_a_security_fix_is_high_and_not_called_a_fix():
    a = analyse_offline(commit('Revert "Fix path traversal in static files"'), [mod("src/app/static.py", 2, 9)], "en")
    assert (a.change_type, a.importance) == (T.REVERT, HIGH)
    assert a.importance_reason.startswith("Reverts a security-related change")
    assert not any(r.startswith("The fixed security issue") for r in a.risks)


@pytest.mark.parametrize("title,expected", [
    ("[Attention][3/n] Remove usage of deprecated `seq_lens_cpu`", T.REFACTOR),
    ("[Quantization][MoE] remove unused ep logic from moe marlin", T.REFACTOR),
    ("[Model] Cleanup: Remove redundant manual definition of `make_empty_intermediate_tensors`", T.REFACTOR),
    ("Remove the TPU backend", T.REMOVAL),
])
def test_cleanup_is_not_a_feature_removal(title, expected):
    assert analyse_offline(commit(title), SRC, "en").change_type is expected


def test_reason_joins_specific_facts_and_drops_redundant_size():
    title, files, *_ = VLLM_DAY[0]
    en = analyse_offline(commit(title), files, "en")
    assert "large source change" not in en.importance_reason  # the removal already says it
    title, files, *_ = VLLM_DAY[4]
    en = analyse_offline(commit(title), files, "en")
    assert en.importance_reason == ("Deletes 3 public source files (−97 lines); code that still imports them will break; "
                                    "the title says a default behaviour changes; deployments relying on defaults "
                                    "are affected")


def test_zh_puts_a_space_before_latin_labels():
    a = analyse_offline(commit("[CI] Retry flaky jobs"), [mod(".buildkite/pipeline.yaml", 3, 1)], "zh")
    assert a.importance_reason == "仅改动 CI 配置（1 个文件），不影响运行时代码"


def test_removed_public_api_in_modified_files():
    patch = ("@@ -10,8 +10,2 @@ class Engine:\n"
             "-def generate_legacy(prompt):\n-    return run(prompt)\n"
             "-class LegacySampler:\n-    pass\n"
             "     def step(self):\n"
             "-def _private_helper():\n-    pass\n")
    a = analyse_offline(commit("Clean up engine"), [mod("src/app/engine.py", 0, 6, patch)], "en")
    assert a.importance is MEDIUM
    assert "generate_legacy" in a.importance_reason and "LegacySampler" in a.importance_reason
    assert "_private_helper" not in a.importance_reason


def test_function_moved_between_files_is_not_a_removal():
    a = analyse_offline(commit("Move helper"), [
        mod("src/app/a.py", 0, 2, "@@ -1,2 +0,0 @@\n-def helper(x):\n-    return x"),
        mod("src/app/b.py", 2, 0, "@@ -0,0 +1,2 @@\n+def helper(x):\n+    return x"),
    ], "en")
    assert a.importance is LOW


def test_config_default_change_is_medium_with_a_specific_risk():
    patch = "@@ -20,3 +20,3 @@ class SchedulerConfig:\n     max_num_seqs: int = 256\n-    enable_chunked_prefill: bool = False\n+    enable_chunked_prefill: bool = True\n"
    a = analyse_offline(commit("[Core] Turn on chunked prefill"), [mod("vllm/config/scheduler.py", 1, 1, patch)], "en")
    assert a.importance is MEDIUM
    assert "enable_chunked_prefill (False → True)" in a.importance_reason
    assert any("enable_chunked_prefill" in r and "False" in r for r in a.risks)
    assert "set enable_chunked_prefill=False explicitly" in a.recommendations[0]


def test_cli_flags():
    removed = "@@ -5,2 +5,1 @@\n-    parser.add_argument(\"--legacy-mode\", action=\"store_true\")\n     parser.add_argument(\"--port\")\n"
    a = analyse_offline(commit("Simplify the CLI"), [mod("src/app/cli.py", 0, 1, removed)], "en")
    assert a.importance is HIGH and "--legacy-mode" in a.importance_reason
    added = "@@ -5,1 +5,2 @@\n+    parser.add_argument('--max-retries', type=int)\n"
    b = analyse_offline(commit("Add retry flag"), [mod("src/app/cli.py", 1, 0, added)], "en")
    assert b.importance is MEDIUM and "--max-retries" in b.importance_reason


@pytest.mark.parametrize("title,patch,expected", [
    ("Bump numpy from 1.26.4 to 2.0.0", None, MEDIUM),
    ("Bump numpy from 1.26.4 to 1.26.5", None, LOW),
    ("Update dependency eslint to v9", None, MEDIUM),     # Renovate's name for a major update
    ("Update dependency eslint to v8.57.1", None, LOW),
    ("Update requirements", "@@ -1,2 +1,2 @@\n-pydantic>=1.10,<2\n+pydantic>=2.7,<3\n torch==2.9.0\n", MEDIUM),
    ("Update requirements", "@@ -1,1 +1,1 @@\n-httpx==0.27.0\n+httpx==0.28.1\n", MEDIUM),  # 0.x minors break
    ("Update requirements", "@@ -1,1 +1,1 @@\n-torch==2.8.0\n+torch==2.9.0\n", LOW),
])
def test_dependency_major_bumps(title, patch, expected):
    a = analyse_offline(commit(title), [mod("requirements.txt", 1, 1, patch)], "en")
    assert (a.change_type, a.importance) == (T.DEPENDENCIES, expected), a.importance_reason
    if expected is MEDIUM:
        assert "Major version bump" in a.importance_reason
        assert any("changelog" in r for r in a.recommendations)


def test_build_files_matter_when_they_change_how_shipped_artefacts_are_built():
    flags = analyse_offline(commit("Build with native CPU features"), [
        mod("CMakeLists.txt", 1, 1, '@@ -3,1 +3,1 @@ project(app)\n-set(CMAKE_CXX_FLAGS "-O2")\n+set(CMAKE_CXX_FLAGS "-O3 -march=native")')], "zh")
    assert flags.importance is MEDIUM
    assert flags.importance_reason.startswith("修改了发布产物的构建方式（-O3 -march=native (CMakeLists.txt)）")
    assert any("各目标平台" in r for r in flags.recommendations)
    # Moving a helper target around changes no flag, profile or dependency of what ships.
    plain = analyse_offline(commit("Use the system CUDA"), [
        mod("CMakeLists.txt", 2, 1, "@@ -10,1 +10,2 @@ add_library(app)\n-add_subdirectory(third)\n+add_subdirectory(extern)\n+add_subdirectory(more)")], "en")
    assert plain.importance is LOW
    assert "does not change how shipped artefacts are built" in plain.importance_reason


def test_moved_python_module_breaks_old_imports():
    a = analyse_offline(commit("Reorganise utils"), [
        mod("src/app/utils/text.py", 0, 0, status="renamed", previous_path="src/app/text_utils.py")], "en")
    assert a.importance is MEDIUM
    assert any("src/app/text_utils.py moved to src/app/utils/text.py" in r for r in a.risks)


# --- depth, texts, languages -------------------------------------------------------------------

def test_low_has_type_and_one_line_summary_only():
    body = "The message said ARM was unsupported. It is supported now.\n\nMore details here."
    a = analyse_offline(commit("[Bugfix] Fix display error (#33020)", body), [mod("vllm/platforms/cpu.py", 1, 1)], "en")
    assert a.importance is LOW
    assert a.risks == () and a.recommendations == () and a.impact == ""
    assert a.insights.architecture == a.insights.performance == a.insights.security == ""
    assert "\n" not in a.summary
    assert a.summary == "The message said ARM was unsupported. It is supported now."


def test_medium_and_high_carry_summary_impact_and_specific_advice():
    body = ("<!-- markdownlint-disable -->\n## Purpose\n\nFIX #33000\n\n"
            "Adds support for FunAudioChat, an audio-language model with continuous and discrete "
            "audio towers.\n\n## Test Plan\n\npytest tests/models")
    title, files, *_ = VLLM_DAY[2]
    zh = analyse_offline(commit(title, body), files, "zh")
    assert zh.importance is MEDIUM
    # The author's sentence, whole; the test plan is not part of the summary.
    assert zh.summary.startswith("提交说明：「Adds support for FunAudioChat, an audio-language model with "
                                 "continuous and discrete audio towers.」")
    assert "pytest" not in zh.summary
    assert zh.impact == "影响：vllm 的使用者。"
    assert "新增 2 个源码文件（+1,120 行）" in zh.insights.architecture
    en = analyse_offline(commit(title, body), files, "en")
    assert en.summary == "Adds support for FunAudioChat, an audio-language model with continuous and discrete audio towers."
    assert en.impact == "Affects users of vllm."
    assert en.risks and "vllm/" in en.risks[0]


def test_source_change_without_tests_is_a_risk():
    a = analyse_offline(commit("feat: add retries"), [mod("src/app/retry.py", 150, 10)], "en")
    assert a.importance is MEDIUM
    assert "+150/−10 source lines changed (src/app/retry.py) without any test change" in a.risks
    with_tests = analyse_offline(commit("feat: add retries"), [mod("src/app/retry.py", 150, 10), mod("tests/test_retry.py", 80)], "en")
    assert not any("without any test" in r for r in with_tests.risks)


def test_perf_insight_and_advice():
    a = analyse_offline(commit("[Perf] Fuse MoE kernels"), [mod("csrc/moe/fused.cu", 200, 90), mod("vllm/moe.py", 20, 5)], "en")
    assert a.importance is MEDIUM
    assert "Marked as a performance change" in a.insights.performance
    assert "csrc/moe/fused.cu" in a.insights.performance
    assert any("csrc/moe/fused.cu" in r for r in a.risks)
    assert any("throughput" in r for r in a.recommendations)


def test_no_insights_and_only_a_located_generic_risk_when_no_rule_applies():
    a = analyse_offline(commit("[ROCm] Enabling forward_includes_kv_cache"),
                        [mod("vllm/attn/rocm.py", 38, 12), mod("tests/test_rocm.py", 10)], "en")
    assert a.importance is MEDIUM
    assert a.insights.architecture == a.insights.performance == a.insights.security == ""
    # Nothing specific is known, so one generic line — and it still names the place.
    assert a.risks == ("vllm/attn/rocm.py is new code; edge cases beyond the author's tests are unproven",)
    assert a.impact == "Affects users of ROCm (vllm)."


def _allowed_words(commit_: Commit, files) -> set[str]:
    words = set(re.findall(r"[A-Za-z]+", commit_.title + " " + commit_.body))
    for f in files:
        words |= set(re.findall(r"[A-Za-z]+", f.path + " " + (f.previous_path or "") + " " + (f.patch or "")))
    return words | {"API", "CI", "GPU", "Bug"}


@pytest.mark.parametrize("row", VLLM_DAY + [
    ("feat!: drop v1", [mod("src/app/api.py", 300, 40), mod("requirements.txt", 1, 1, "@@ -1 +1 @@\n-pydantic==1.10\n+pydantic==2.7\n")], None, None, None),
    ("Fix CVE-2025-1 in auth", [mod("src/app/auth.py", 3, 1), mod("Dockerfile", 1, 1)], None, None, None),
], ids=lambda row: row[0][:40])
def test_both_languages_give_full_texts_and_zh_has_no_english(row):
    title, files = row[0], row[1]
    c = commit(title)
    zh, en = analyse_offline(c, files, "zh"), analyse_offline(c, files, "en")
    assert (zh.importance, zh.change_type) == (en.importance, en.change_type)
    assert zh.importance_reason and en.importance_reason and zh.summary and en.summary
    assert len(zh.risks) == len(en.risks) and len(zh.recommendations) == len(en.recommendations)
    allowed = _allowed_words(c, files)
    zh_text = " ".join([zh.importance_reason, zh.summary, zh.impact, *zh.risks, *zh.recommendations,
                        zh.insights.architecture, zh.insights.performance, zh.insights.security])
    leaked = {w for w in re.findall(r"[A-Za-z]+", zh_text) if w not in allowed}
    assert not leaked
    assert re.search(r"[\u4e00-\u9fff]", zh.importance_reason)
    assert not re.search(r"[\u4e00-\u9fff]", " ".join([en.importance_reason, en.summary, *en.risks]))


def test_revert_of_a_lint_fix_is_still_a_revert():
    a = analyse_offline(commit('Revert "Fix ruff warnings"'), [mod("src/app/core.py", 10, 10)], "en")
    assert (a.change_type, a.importance) == (T.REVERT, MEDIUM)


def test_awkward_input_still_gives_an_analysis():
    files = [FileChange("assets/logo.png", "modified", binary=True), mod("src/app/min.js", 1, 1, "@@ -1 +1 @@\n-" + "a" * 50_000 + "\n+b")]
    for title in ("", "   ", "[", "((((", "Revert", "feat:"):
        a = analyse_offline(commit(title, body="\n\n<!-- -->"), files, "zh")
        assert a.importance_reason and a.summary


def test_provenance_and_coverage_pass_through():
    cov = Coverage(files_total=3, files_shown=2, omitted=(("poetry.lock", "lockfile"),))
    a = analyse_offline(commit("fix: x"), SRC, "en", coverage=cov, origin="fallback", note="LLM timed out")
    assert (a.origin, a.note, a.coverage, a.model) == ("fallback", "LLM timed out", cov, "")
    assert analyse_offline(commit("fix: x"), SRC, "en").origin == "offline"


def test_heuristic_version_is_a_non_empty_string():
    assert isinstance(RULES_VERSION, str) and RULES_VERSION


# --- building blocks ---------------------------------------------------------------------------

@pytest.mark.parametrize("path,kind", [
    ("vllm/model_executor/models/llama.py", FileKind.SOURCE),
    ("csrc/attention/paged.cu", FileKind.SOURCE),
    ("tests/models/test_llama.py", FileKind.TEST),
    ("pkg/server/handler_test.go", FileKind.TEST),
    ("web/src/App.test.tsx", FileKind.TEST),
    ("src/main/java/LatestTest.java", FileKind.TEST),
    ("src/main/java/Latest.java", FileKind.SOURCE),
    ("docs/usage.md", FileKind.DOCS),
    ("CHANGELOG.md", FileKind.DOCS),
    ("examples/offline.py", FileKind.DOCS),
    (".github/workflows/ci.yml", FileKind.CI),
    (".buildkite/run.sh", FileKind.CI),
    ("CMakeLists.txt", FileKind.BUILD),
    ("pyproject.toml", FileKind.BUILD),
    ("docker/Dockerfile.rocm", FileKind.BUILD),
    ("requirements/cuda.txt", FileKind.DEPENDENCY),
    ("package.json", FileKind.DEPENDENCY),
    ("go.mod", FileKind.DEPENDENCY),
    ("go.sum", FileKind.LOCKFILE),
    ("uv.lock", FileKind.LOCKFILE),
    ("api/v1/service.pb.go", FileKind.GENERATED),
    ("third_party/json/json.hpp", FileKind.GENERATED),
    ("config/app.yaml", FileKind.CONFIG),
    ("benchmarks/serve.py", FileKind.TOOLING),
    ("assets/logo.png", FileKind.OTHER),
])
def test_classify_path(path, kind):
    assert classify_path(path) is kind


def test_parse_title_details():
    info = parse_title('Revert "Enable Cross layers KV cache layout at NIXL Connector (#30207)" (#33241)')
    assert info.reverted_title == "Enable Cross layers KV cache layout at NIXL Connector"
    info = parse_title("[Quantization][Deprecation] Remove Marlin 24 (#32688)")
    assert info.tags == ("Quantization", "Deprecation") and info.subject == "Remove Marlin 24"
    assert parse_title("[Feature]: Container image WORKDIR consistency").subject == "Container image WORKDIR consistency"
    assert parse_title("chore(deps): bump lodash from 4.17.20 to 5.0.0").bump == ("lodash", "4.17.20", "5.0.0")


@pytest.mark.parametrize("old,new,major", [("1.26.4", "2.0.0", True), ("1.2", "1.3", False),
                                            ("0.3.1", "0.4.0", True), ("0.3.1", "0.3.2", False), ("", "9", True)])
def test_is_major_bump(old, new, major):
    assert is_major_bump(old, new) is major


def test_first_paragraph_skips_templates():
    body = ("<!-- please fill in -->\n## Purpose\n\nFIX #123 (*link existing issues*)\n\n"
            "- [x] The purpose of the PR\n\nThis makes the scheduler\nskip finished requests.\n\nTest Plan:\nran it")
    assert first_paragraph(body) == "This makes the scheduler skip finished requests."
    assert first_paragraph("Fixes #12\n\nhttps://example.com/x") == ""


# --- issue 11: the categories a maintainer flagged, as hand-written commits in real git repos ---
# Each commit is made with tests/gitrepo.py and read back through the bot's own local git source,
# so patches, hunk headers and statuses are exactly what git produces.

import asyncio  # noqa: E402

from bot.analysis.profile import ProfileError, RepoProfile, parse_profile  # noqa: E402
from bot.sources.localgit import LocalGitSource  # noqa: E402
from tests.gitrepo import GitRepo  # noqa: E402

WHEN = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)

ENTRY_POINTS_V1 = '''\
RESERVED = {"python", "pip"}


def check_entry_point(name: str) -> None:
    if name in RESERVED:
        raise ValueError(f"reserved entry point: {name}")
'''

HASHES_V1 = '''\
def verify(hashes: dict[str, str], require_hashes: bool) -> bool:
    if require_hashes and not hashes:
        return False
    return True
'''

CARGO_V1 = '''\
[package]
name = "app"
version = "0.4.0"
edition = "2021"

[dependencies]
serde = "1.0"

[profile.release]
lto = "fat"
codegen-units = 1
'''

OPTIONS_V1 = '''\
{
  "properties": {
    "cache-dir": {
      "description": "Path to the cache directory.",
      "type": "string",
      "default": "~/.cache/app"
    }
  }
}
'''


def _analyse_last(repo: GitRepo, lang: str = "en", profile: RepoProfile | None = None):
    source = LocalGitSource(str(repo.path))

    async def read():
        sha = repo.git("rev-parse", "HEAD").strip()
        c = await source.get_commit(sha)
        return c, await source.get_files(sha)

    c, files = asyncio.run(read())
    return analyse_offline(c, files, lang, profile=profile)


@pytest.fixture
def repo(tmp_path):
    r = GitRepo(tmp_path / "app")
    r.commit("Initial import", {
        "src/app/entry_points.py": ENTRY_POINTS_V1, "src/app/hashes.py": HASHES_V1, "Cargo.toml": CARGO_V1,
        "app.schema.json": OPTIONS_V1, "crates/app_core/src/lib.rs": "pub struct Resolver {}\n\nimpl Resolver {\n"
        "    pub fn new() -> Self {\n        Resolver {}\n    }\n}\n",
        "tests/test_resolver.py": "def test_a():\n    assert True\n\n\ndef test_b():\n    assert True\n",
        "scripts/release.py": "print('release')\n", "uv.lock": 'version = 1\n\n[[package]]\nname = "serde"\nversion = "1.0.228"\n',
    }, when=WHEN)
    return r


def test_one_line_reserved_entry_point_fix_is_high(repo):
    repo.commit("Reject case-variant reserved entry points (#2001)",
                {"src/app/entry_points.py": ENTRY_POINTS_V1.replace("if name in RESERVED", "if name.lower() in RESERVED")},
                when=WHEN)
    a = _analyse_last(repo)
    assert a.importance is HIGH, a.importance_reason
    assert "reserved" in a.importance_reason
    assert any("refused" in r for r in a.risks)


def test_md5_only_hashes_rejected_under_require_hashes_is_high(repo):
    repo.commit("Reject MD5-only hashes under --require-hashes",
                {"src/app/hashes.py": HASHES_V1.replace(
                    "    return True\n",
                    "    if require_hashes and set(hashes) == {'md5'}:\n        return False\n    return True\n")},
                when=WHEN)
    a = _analyse_last(repo, "zh")
    assert a.importance is HIGH, a.importance_reason
    assert "md5" in a.importance_reason.lower()


def test_panic_abort_in_release_profile_is_at_least_medium_and_says_what_breaks(repo):
    repo.commit("Set panic = abort for release builds",
                {"Cargo.toml": CARGO_V1.replace('codegen-units = 1\n', 'codegen-units = 1\npanic = "abort"\n')},
                when=WHEN)
    a = _analyse_last(repo)
    assert a.importance in (MEDIUM, HIGH), a.importance_reason
    assert "panic" in a.importance_reason and "profile.release" in a.importance_reason
    assert any("catch_unwind" in r for r in a.risks)
    assert "released binaries" in a.impact


def test_internal_pub_fn_new_is_not_a_public_removal(repo):
    repo.commit("Remove Resolver::new in favour of Default",
                {"crates/app_core/src/lib.rs": "pub struct Resolver {}\n\nimpl Default for Resolver {\n"
                 "    fn default() -> Self {\n        Resolver {}\n    }\n}\n"}, when=WHEN)
    a = _analyse_last(repo)
    assert a.importance is LOW, a.importance_reason
    assert "callers must migrate" not in a.importance_reason
    assert not any("Public definitions" in r for r in a.risks)


def test_removed_top_level_item_on_the_declared_surface_is_a_removal(repo):
    repo.commit("Remove the Resolver type",
                {"crates/app_core/src/lib.rs": "pub struct Other {}\n"}, when=WHEN)
    profile = parse_profile('[surface]\npackages = ["crates/app_core/"]\n')
    a = _analyse_last(repo, profile=profile)
    assert a.importance is MEDIUM
    assert "Resolver" in a.importance_reason and "callers must migrate" in a.importance_reason
    # Without the profile, a member crate of a workspace is internal by default.
    assert _analyse_last(repo).importance is LOW


def test_json_schema_description_is_not_a_config_default(repo):
    repo.commit("Clarify the cache-dir description",
                {"app.schema.json": OPTIONS_V1.replace("Path to the cache directory.",
                                                       "Directory where downloaded wheels are cached.")}, when=WHEN)
    a = _analyse_last(repo)
    assert a.importance is LOW, a.importance_reason
    assert "default" not in a.importance_reason.lower()
    repo.commit("Move the default cache",
                {"app.schema.json": OPTIONS_V1.replace('"~/.cache/app"', '"~/.local/cache/app"')}, when=WHEN)
    changed = _analyse_last(repo)
    assert changed.importance is MEDIUM
    assert '"~/.cache/app" → "~/.local/cache/app"' in changed.importance_reason


def test_deleting_tests_is_low_and_not_a_removal(repo):
    repo.commit("Remove the resolver tests", {"tests/test_resolver.py": None}, when=WHEN)
    a = _analyse_last(repo)
    assert a.importance is LOW
    assert a.importance_reason == "Test-only change (1 file); no runtime code touched"


def test_tooling_only_commit_is_low(repo):
    repo.commit("Rewrite the release script", {"scripts/release.py": "import sys\n" + "print('step')\n" * 400},
                when=WHEN)
    a = _analyse_last(repo)
    assert a.importance is LOW, a.importance_reason
    assert "tooling" in a.importance_reason


def test_renovate_body_becomes_a_version_line(repo):
    body = ("This PR contains the following updates:\n\n| Package | Type | Update | Change |\n|---|---|---|---|\n"
            "| [serde](https://serde.rs) ([source](https://github.com/serde-rs/serde)) | workspace.dependencies "
            "| patch | `1.0.228` -> `1.0.229` |\n\n---\n\n### Release Notes\n\n<details>\n<summary>serde-rs/serde "
            "(serde)</summary>\n\nlots of notes\n</details>\n\n---\n\n### Configuration\n\n📅 **Schedule**: "
            "Branch creation - \"before 4am on Monday\"\n\n🚦 **Automerge**: Disabled by config.\n")
    repo.commit(f"Update Rust crate serde to v1.0.229\n\n{body}",
                {"uv.lock": 'version = 1\n\n[[package]]\nname = "serde"\nversion = "1.0.229"\n'},
                when=WHEN, author="renovate[bot]")
    a = _analyse_last(repo)
    assert a.summary == "serde 1.0.228 → 1.0.229 (uv.lock)."
    assert _analyse_last(repo, "zh").summary == "依赖更新：serde 1.0.228 → 1.0.229（uv.lock）。"


def test_lockfile_diff_names_the_update_when_the_body_is_empty(repo):
    repo.commit("Bump serde", {"uv.lock": 'version = 1\n\n[[package]]\nname = "serde"\nversion = "1.0.230"\n'},
                when=WHEN, author="dependabot[bot]")
    assert _analyse_last(repo).summary == "serde 1.0.228 → 1.0.230 (uv.lock)."


LONG_BODY = ("The resolver used to pick the first candidate it saw, even when a later index had a better "
             "match for the requested markers, which made installs depend on index order. It now ranks "
             "candidates by marker specificity before index order, and only falls back to index order when two "
             "candidates are equally specific. Ties are broken by version, newest first, as before. The "
             "behaviour for single-index setups does not change at all, and neither does the lockfile format. "
             "A follow-up will expose the ranking in the verbose output so that users can see why a candidate "
             "won over another one.")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_summaries_are_whole_sentences_never_clipped(repo, lang):
    repo.commit(f"Rank candidates by marker specificity\n\n{LONG_BODY}",
                {"src/app/entry_points.py": ENTRY_POINTS_V1 + "\n\ndef rank(c):\n    return c\n" * 30}, when=WHEN)
    a = _analyse_last(repo, lang)
    assert "…" not in a.summary and "..." not in a.summary
    text = a.summary.removeprefix("提交说明：「").split("」")[0]
    assert text.endswith(".")
    assert text in LONG_BODY  # whole sentences of the author's text, nothing invented or cut
    assert len(text) < len(LONG_BODY)


def test_profile_preview_caps_at_medium_and_internal_paths_do_not_count(repo):
    profile = parse_profile('[preview]\ntags = ["preview"]\n[internal]\npaths = ["src/app/"]\n')
    repo.commit("[preview] Reject reserved names in the new installer",
                {"src/app/entry_points.py": ENTRY_POINTS_V1.replace("in RESERVED", "in RESERVED | {'uv'}")}, when=WHEN)
    assert _analyse_last(repo).importance is HIGH
    capped = _analyse_last(repo, profile=parse_profile('[preview]\ntags = ["preview"]\n'))
    assert capped.importance is MEDIUM and "Preview-only" in capped.importance_reason
    internal = _analyse_last(repo, profile=profile)
    assert internal.importance is LOW


@pytest.mark.parametrize("text,message", [
    ("[surface\ncli = 1", "is not valid TOML"),
    ("[publc]\npaths = []", "unknown section [publc]"),
    ("[surface]\ncli = 3", "surface.cli must be a list of paths"),
    ("[internal]\ndirs = ['x/']", "unknown key 'dirs'"),
])
def test_a_bad_profile_is_one_clear_sentence(text, message):
    with pytest.raises(ProfileError) as err:
        parse_profile(text)
    assert message in str(err.value)
    assert str(err.value).endswith("the default profile is used.")
    assert "\n" not in str(err.value)


def test_profile_is_read_from_the_default_branch_through_the_source(tmp_path, caplog):
    from bot.analysis.profile import load_profile

    r = GitRepo(tmp_path / "with-profile")
    r.commit("Add a profile", {".digest.toml": '[surface]\ncli = ["src/cli.py"]\n[internal]\npaths = ["scripts/"]\n',
                               "src/cli.py": "x = 1\n"}, when=WHEN)
    profile, problem = asyncio.run(load_profile(LocalGitSource(str(r.path))))
    assert problem == "" and profile.declared
    assert profile.surface_kind("src/cli.py") == "cli" and profile.is_internal("scripts/x.py")

    bare = GitRepo(tmp_path / "no-profile")
    bare.commit("Start", {"README.md": "hi\n"}, when=WHEN)
    profile, problem = asyncio.run(load_profile(LocalGitSource(str(bare.path))))
    assert (profile.declared, problem) == (False, "")

    r.commit("Break the profile", {".digest.toml": "[surface\n"}, when=WHEN)
    with caplog.at_level("WARNING"):
        profile, problem = asyncio.run(load_profile(LocalGitSource(str(r.path))))
    assert not profile.declared  # the defaults, never a crash
    assert problem.startswith(".digest.toml is not valid TOML") and problem.endswith("the default profile is used.")
    assert problem in caplog.text
    override, problem = asyncio.run(load_profile(LocalGitSource(str(r.path)), override='[internal]\npaths = ["x/"]\n'))
    assert override.is_internal("x/y.py") and problem == ""


def test_a_revert_is_summarised_as_what_it_reverts(repo):
    first = repo.commit("Make Resolver hashable", {"src/app/hashes.py": HASHES_V1 + "\n\ndef h():\n    return 1\n"},
                        when=WHEN)
    repo.commit(f'Revert "Make Resolver hashable"\n\nThis reverts commit {first}.', {"src/app/hashes.py": HASHES_V1},
                when=WHEN)
    en, zh = _analyse_last(repo), _analyse_last(repo, "zh")
    assert en.change_type is T.REVERT
    assert en.summary.startswith("Reverts “Make Resolver hashable”.")
    assert zh.summary.startswith("回滚「Make Resolver hashable」。")


def test_hidden_flags_and_vendored_stubs_are_not_user_facing():
    hidden = analyse_offline(commit("Add a secret --check-unreachable"), [mod("src/app/main.py", 3, 0,
        '@@ -10,0 +10,3 @@ def parser():\n+    p.add_argument("--check-unreachable", action="store_true",\n'
        '+                   help=argparse.SUPPRESS)\n+    return p')], "en")
    assert "--check-unreachable" not in hidden.importance_reason and hidden.importance is LOW
    shown = analyse_offline(commit("Add --check-unreachable"), [mod("src/app/main.py", 2, 0,
        '@@ -10,0 +10,2 @@ def parser():\n+    p.add_argument("--check-unreachable", action="store_true",\n'
        '+                   help="Warn about unreachable code")')], "en")
    assert shown.importance is MEDIUM and "--check-unreachable" in shown.importance_reason
    sync = analyse_offline(commit("Sync typeshed"), [mod(f"mypy/typeshed/stdlib/m{i}.pyi", 20, 10) for i in range(30)], "en")
    assert sync.importance is LOW
