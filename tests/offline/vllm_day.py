"""The vLLM day of 2026-01-28: real titles with the level a careful LLM gave them in
the shared reference report (reference/vllm-2026-01-28.md). The file lists are reconstructed from the reference
report's own description of each commit (paths and rough sizes it names); they stand in for what
GitHub returns.

(title, files, reference level, our level, our type). Where we deliberately disagree with the
reference level, the comment says why.
"""

from __future__ import annotations

from tests.offline.helpers import HIGH, LOW, MEDIUM, T, gone, mod, new, removed_patch

VLLM_DAY = [
    (
        "[Quantization][Deprecation] Remove Marlin 24 (#32688)",
        [
            gone("csrc/quantization/marlin/sparse/marlin_24_cuda_kernel.cu", 1090),
            gone("csrc/quantization/marlin/sparse/common/base.h", 58),
            gone("csrc/quantization/marlin/sparse/common/mma.h", 120),
            gone("csrc/quantization/marlin/sparse/common/mem.h", 110),
            gone("csrc/quantization/marlin/sparse/LICENSE", 200),
            mod("CMakeLists.txt", 0, 3),
            mod("csrc/torch_bindings.cpp", 0, 9),
            mod("vllm/_custom_ops.py", 0, 38),
            gone(
                "vllm/model_executor/layers/quantization/gptq_marlin_24.py",
                296,
                removed_patch(
                    "class GPTQMarlin24Config(QuantizationConfig):", "    def get_name(cls):", "        pass"
                ),
            ),
            mod("vllm/model_executor/layers/quantization/__init__.py", 0, 4),
            gone("tests/kernels/quantization/test_marlin_24.py", 160),
            mod("benchmarks/kernels/benchmark_marlin.py", 2, 50),
        ],
        HIGH,
        HIGH,
        T.REMOVAL,
    ),
    (
        "[Quantization][Deprecation] Remove BitBlas (#32683)",
        [
            gone("vllm/model_executor/layers/quantization/bitblas.py", 460),
            gone("vllm/model_executor/layers/quantization/gptq_bitblas.py", 480),
            gone("vllm/model_executor/layers/quantization/utils/bitblas_utils.py", 220),
            gone("vllm/model_executor/kernels/mixed_precision/bitblas.py", 300),
            mod("vllm/model_executor/layers/linear.py", 1, 12),
            mod("vllm/config/model.py", 0, 4),
            gone("docs/features/quantization/bitblas.md", 60),
            gone("tests/models/quantization/test_bitblas.py", 70),
        ],
        HIGH,
        HIGH,
        T.REMOVAL,
    ),
    # Reference: high. Ours: medium — a new model is 1,100 lines of new code, but nothing existing
    # changes for anyone not using it; size alone never makes a commit high.
    (
        "Adds FunAudioChat multimodal audio model support (#2) (#33058)",
        [
            new("vllm/model_executor/models/funaudiochat.py", 980),
            new("vllm/transformers_utils/configs/funaudiochat.py", 140),
            mod("vllm/model_executor/models/registry.py", 1),
            mod("vllm/multimodal/audio.py", 4, 1),
            mod("examples/offline_inference/audio_language.py", 40),
            mod("docs/models/supported_models.md", 1),
            mod("tests/models/registry.py", 3),
        ],
        HIGH,
        MEDIUM,
        T.FEATURE,
    ),
    # Reference: high. Ours: low — about 3,000 new lines, but all of them benchmark tooling
    # under benchmarks/: nothing a vLLM user runs changes (tooling-only commits are low).
    (
        "Add attention benchmarking tools (#26835)",
        [
            new("benchmarks/attention_benchmarks/benchmark.py", 900),
            new("benchmarks/attention_benchmarks/runner.py", 700),
            new("benchmarks/attention_benchmarks/mla_runner.py", 800),
            new("benchmarks/attention_benchmarks/common.py", 400),
            new("benchmarks/attention_benchmarks/configs/mla_decode.yaml", 60),
            new("benchmarks/attention_benchmarks/README.md", 200),
        ],
        HIGH,
        LOW,
        T.FEATURE,
    ),
    (
        "[Misc] Provide a DeepSeek ReasoningParser with thinking enabled by default (#33221)",
        [
            mod("vllm/reasoning/deepseek_v3_reasoning_parser.py", 40, 2),
            mod("vllm/reasoning/__init__.py", 4, 12),
            gone("vllm/reasoning/holo2_reasoning_parser.py", 35),
            gone("vllm/reasoning/glm4_moe_reasoning_parser.py", 30),
            gone("vllm/reasoning/kimi_k2_reasoning_parser.py", 32),
            mod("tests/reasoning/test_holo2_reasoning_parser.py", 3, 3),
        ],
        MEDIUM,
        MEDIUM,
        T.FEATURE,
    ),
    (
        'Revert "Enable Cross layers KV cache layout at NIXL Connector (#30207)" (#33241)',
        [
            mod("vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py", 20, 120),
            mod("vllm/config/kv_transfer.py", 0, 12),
            mod("docs/features/nixl_connector_usage.md", 0, 20),
            mod("tests/v1/kv_connector/unit/test_nixl_connector.py", 5, 60),
        ],
        MEDIUM,
        MEDIUM,
        T.REVERT,
    ),
    # Reference: medium. Ours: low — typing fixes to satisfy mypy, no behaviour change.
    (
        "[CI] Enable mypy import following for `vllm/compilation` (#33199)",
        [
            mod("tools/pre_commit/mypy.py", 2, 1),
            *[
                mod(f"vllm/compilation/{name}.py", 5, 4)
                for name in ("backends", "decorators", "fusion", "pass_manager", "wrapper", "counter", "monitor")
            ],
        ],
        MEDIUM,
        LOW,
        T.CI_BUILD,
    ),
    (
        "[ROCm] Enabling forward_includes_kv_cache on ROCm MHA backends (#33106)",
        [
            mod("vllm/v1/attention/backends/rocm_attn.py", 38, 12),
            mod("vllm/v1/attention/backends/rocm_aiter_fa.py", 14, 6),
            mod("vllm/platforms/rocm.py", 4, 1),
        ],
        MEDIUM,
        MEDIUM,
        T.FEATURE,
    ),
    # Reference: medium. Ours: low — a lint rule and mechanical string fixes.
    (
        "Add flake8-implicit-str-concat rules to Ruff (#33191)",
        [
            mod("pyproject.toml", 1),
            *[mod(f"vllm/entrypoints/module_{i}.py", 3, 3) for i in range(20)],
            *[mod(f"tests/entrypoints/test_module_{i}.py", 2, 2) for i in range(10)],
            mod("examples/online_serving/openai_chat_completion_client.py", 2, 2),
        ],
        MEDIUM,
        LOW,
        T.FEATURE,
    ),
    (
        "[torch.compile] Speed up MOE handling in forward_context (#33184)",
        [
            mod("vllm/forward_context.py", 48, 22),
            mod("vllm/model_executor/layers/fused_moe/layer.py", 18, 14),
        ],
        MEDIUM,
        MEDIUM,
        T.PERFORMANCE,
    ),
    (
        "feature: support eagle3 for HunyuanVL & Hunyuan (#33035)",
        [
            mod("vllm/model_executor/models/hunyuan_v1.py", 32, 4),
            mod("vllm/model_executor/models/hunyuan_vision.py", 24, 2),
            mod("vllm/config/speculative.py", 3),
            mod("tests/models/registry.py", 4),
        ],
        MEDIUM,
        MEDIUM,
        T.FEATURE,
    ),
    (
        "Support compress-tensors with nvfp4 or fp8 weights and modelopt with nvfp4 weights on Turing (#33076)",
        [
            mod("vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py", 30, 8),
            mod("vllm/model_executor/layers/quantization/modelopt.py", 26, 6),
            mod("vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py", 20, 4),
        ],
        MEDIUM,
        MEDIUM,
        T.FEATURE,
    ),
    (
        "[CI] Update job dependency syntax for Intel and AMD jobs (#33240)",
        [
            mod(".buildkite/test_areas/intel.yaml", 12, 12),
            mod(".buildkite/test_areas/amd.yaml", 20, 20),
        ],
        LOW,
        LOW,
        T.CI_BUILD,
    ),
    (
        "[CI] Update job dependency for hardware and CPU jobs (#33237)",
        [
            mod(".buildkite/hardware_tests/cpu.yaml", 8, 2),
            mod(".buildkite/hardware_tests/arm.yaml", 6, 1),
        ],
        LOW,
        LOW,
        T.CI_BUILD,
    ),
    (
        "[XPU]disable test_acceptance_length UT (#33226)",
        [
            mod(".buildkite/scripts/hardware_ci/run-xpu-test.sh", 1, 1),
        ],
        LOW,
        LOW,
        T.CI_BUILD,
    ),
    (
        "[Docs] Simplify CPU x86 Docker build documentation (#33071)",
        [
            mod("docs/getting_started/installation/cpu.x86.inc.md", 30, 85),
        ],
        LOW,
        LOW,
        T.DOCS,
    ),
    # Reference: low, typed "refactor" (its low tier had no bug-fix type). Ours: bug fix, low.
    (
        "[Bugfix] Lazy import NgramProposer in GPU model runner (#32821)",
        [
            mod("vllm/v1/worker/gpu_model_runner.py", 4, 2),
        ],
        LOW,
        LOW,
        T.BUGFIX,
    ),
    (
        "Don't use `min_pixels`/`max_pixels` from Qwen2VL's processor (#33208)",
        [
            mod("vllm/model_executor/models/qwen2_vl.py", 10, 14),
        ],
        LOW,
        LOW,
        T.OTHER,
    ),
    (
        "Relax protobuf library version constraints (#33202)",
        [
            mod(
                "requirements/common.txt",
                1,
                1,
                "@@ -40,1 +40,1 @@\n-protobuf >= 5.29.6, != 6.30.*, < 7\n+protobuf >= 5.29.6",
            ),
            mod("requirements/build.txt", 1, 1, "@@ -3,1 +3,1 @@\n-grpcio-tools==1.68.1\n+grpcio-tools>=1.68.1"),
        ],
        LOW,
        LOW,
        T.DEPENDENCIES,
    ),
    (
        "[ROCm][CI] Add TORCH_NCCL_BLOCKING_WAIT For Distributed Tests (A100) (#32891)",
        [
            mod(".buildkite/scripts/hardware_ci/run-amd-test.sh", 3),
        ],
        LOW,
        LOW,
        T.CI_BUILD,
    ),
    # Reference: low. Ours: medium — the container image's working directory moves, which
    # breaks anyone who mounts or copies into the old path.
    (
        "[Feature]: Container image WORKDIR consistency (#33159)",
        [
            mod("docker/Dockerfile", 10, 12),
            mod(".buildkite/scripts/run-tests.sh", 3, 3),
        ],
        LOW,
        MEDIUM,
        T.FEATURE,
    ),
    (
        "[Docs] Use definition lists for CLI reference docs (#33186)",
        [
            mod("docs/mkdocs/hooks/generate_argparse.py", 20, 12),
            mod("mkdocs.yaml", 1),
        ],
        LOW,
        LOW,
        T.DOCS,
    ),
    ("[docs] Improve tlparse section (#33211)", [mod("docs/design/debug_vllm_compile.md", 14, 3)], LOW, LOW, T.DOCS),
    (
        "[CI] minor fixes to pipeline generator and tests (#33151)",
        [
            mod(".buildkite/scripts/generate-pipeline.sh", 10, 4),
            mod(".buildkite/scripts/run-distributed.sh", 2, 2),
        ],
        LOW,
        LOW,
        T.CI_BUILD,
    ),
    (
        "[Model Runner V2] Use a different stream for grammar bitmask h2d copy (#33059)",
        [
            mod("vllm/v1/worker/gpu/structured_outputs.py", 45, 30),
            mod("vllm/v1/worker/gpu/model_runner.py", 5, 1),
        ],
        LOW,
        LOW,
        T.REFACTOR,
    ),
    (
        "[Perf] Optimize dcp allocate tensor (#33102)",
        [mod("vllm/v1/attention/backends/mla/common.py", 2, 6)],
        LOW,
        LOW,
        T.PERFORMANCE,
    ),
    (
        "[Bugfix] Fix display error (inconsistent with context) (#33020)",
        [mod("vllm/platforms/cpu.py", 1, 1)],
        LOW,
        LOW,
        T.BUGFIX,
    ),
    (
        'Enabling "2 node" distributed tests in the AMD CI pipeline. (#32719)',
        [
            mod(".buildkite/scripts/hardware_ci/run-amd-test.sh", 60, 4),
            mod(".buildkite/test-amd.yaml", 20, 3),
        ],
        LOW,
        LOW,
        T.CI_BUILD,
    ),
    (
        "[Attention] Use `has_flashinfer` helper (#33177)",
        [
            mod("vllm/v1/attention/backends/flashinfer.py", 3, 9),
            mod("vllm/utils/flashinfer.py", 2, 2),
        ],
        LOW,
        LOW,
        T.REFACTOR,
    ),
    (
        "[Doc] Improve serve parameter documentation with meaningful defaults (#33082)",
        [
            mod("docs/mkdocs/hooks/generate_argparse.py", 9, 2),
        ],
        LOW,
        LOW,
        T.DOCS,
    ),
    (
        "[BugFix] Fix P/D with non-MoE DP (#33037)",
        [
            mod("vllm/v1/engine/core.py", 10, 5),
            mod("vllm/v1/engine/utils.py", 8, 3),
        ],
        LOW,
        LOW,
        T.BUGFIX,
    ),
]
