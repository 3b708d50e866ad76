"""Issue 33 §1, round 8: highs the seventh blind set showed the diff can bear out — a config
class's field removed, a minimum version newly asserted at run time, a new limit with a default
that refuses larger input. Each rule: the case it was made for, and the neighbours it must leave
alone."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import HIGH, commit, mod

# --- a field removed from a public configuration class ---------------------------------------------

FIELD_GONE = (
    "@@ -306,9 +306,6 @@ class OptimizerConfig:\n"
    "     soap_shampoo_beta: float = 0.95\n"
    '     """The beta of the Shampoo preconditioner."""\n'
    " \n"
    "-    soap_precondition_frequency: int = 1\n"
    '-    """The frequency of the Shampoo preconditioner."""\n'
    "-\n"
)
FIELD_MOVED = FIELD_GONE + "+    soap_precondition_frequency: int = 1\n"  # moved within the class: still there
PARAMETER_GONE = (  # a signature's parameter after the class, not a field
    "@@ -985,9 +985,6 @@ class Qwen2_5_VLConfig(PretrainedConfig):\n"
    " def apply_rotary_pos_emb_vision(\n"
    "-    tensor: torch.Tensor, freqs: torch.Tensor\n"
    "+    x: torch.Tensor\n"
    " ) -> torch.Tensor:\n"
)
NOT_CONFIG = FIELD_GONE.replace("class OptimizerConfig:", "class OptimizerState:")


@pytest.mark.parametrize(
    "path, patch, high",
    [
        ("megatron/core/optimizer/optimizer_config.py", FIELD_GONE, True),  # configs setting it fail to load
        ("megatron/core/optimizer/optimizer_config.py", FIELD_MOVED, False),
        ("server/models/qwen2_5_vl.py", PARAMETER_GONE, False),
        ("megatron/core/optimizer/state.py", NOT_CONFIG, False),  # not a configuration class
        ("tests/unit_tests/test_config.py", FIELD_GONE, False),  # a test's class: nothing users load
    ],
)
def test_a_field_removed_from_a_public_config_class_is_high(path, patch, high):
    a = analyse_offline(commit("bump emerging optimizers to v0.3.0"), [mod(path, 1, 3, patch)], "en")
    assert ("configuration class" in a.importance_reason) is high, a.importance_reason
    if high:
        assert a.importance is HIGH and "soap_precondition_frequency" in a.importance_reason


# --- a minimum version newly asserted at run time ----------------------------------------------------

ASSERTED = (
    "@@ -40,6 +40,12 @@ def _use_causal_conv1d_deterministic_mode():\n"
    " \n"
    "+def assert_causal_conv1d_deterministic(deterministic_mode):\n"
    "+    if not deterministic_mode:\n"
    "+        return\n"
    "+    assert is_causal_conv1d_min_version(conv1d_min), (\n"
    '+        f"causal_conv1d >= {conv1d_min} is required for deterministic_mode"\n'
    "+    )\n"
)
COMPARED = (
    "@@ -10,3 +10,5 @@ import torch\n"
    "+def check():\n"
    '+    assert torch_version >= version.parse("2.4"), "needs torch 2.4"\n'
)
WARNED = (  # a check that only decides a path: nobody is stopped
    "@@ -40,6 +40,8 @@ def setup():\n+    if is_causal_conv1d_min_version(conv1d_min):\n+        use_fast_path()\n"
)


@pytest.mark.parametrize(
    "path, patch, high",
    [
        ("megatron/core/ssm/causal_conv1d.py", ASSERTED, True),
        ("megatron/core/utils_torch.py", COMPARED, True),
        ("megatron/core/ssm/causal_conv1d.py", WARNED, False),
        ("tests/unit_tests/test_conv1d.py", ASSERTED, False),
    ],
)
def test_a_minimum_version_newly_asserted_at_run_time_is_high(path, patch, high):
    a = analyse_offline(commit("Make the conv1d deterministic"), [mod(path, 6, 0, patch)], "en")
    assert (a.importance is HIGH) is high, a.importance_reason
    if high:
        assert "asserts a minimum version" in a.importance_reason


# --- a new limit with a default that refuses larger input -------------------------------------------

ARGS = (
    "@@ -157,6 +157,10 @@ struct Args {\n"
    "     max_client_batch_size: usize,\n"
    "+\n"
    "+    /// Maximum image fetch size in bytes.\n"
    '+    #[clap(default_value = "1073741824", long, env)]\n'
    "+    max_image_fetch_size: usize,\n"
    " }\n"
)
CHECK = (
    "@@ -480,6 +482,12 @@ fn fetch_image(input: &str, max_image_fetch_size: usize) -> Result<Image, ValidationError> {\n"
    "     let data = response.bytes()?;\n"
    "+    if data.len() > max_image_fetch_size {\n"
    "+        return Err(ValidationError::ImageTooLarge(data.len(), max_image_fetch_size));\n"
    "+    }\n"
    "     Ok(decode(data))\n"
)
KERNEL_ARG = (  # a kernel's parameter with a default: no flag users pass, nothing they send refused
    "@@ -10,3 +10,4 @@ def decode(q, kv,\n+    max_image_fetch_size: int = 1024,\n ):\n"
)


@pytest.mark.parametrize(
    "files, high",
    [
        ([("launcher/src/main.rs", ARGS), ("router/src/validation.rs", CHECK)], True),
        ([("router/src/kernels.py", KERNEL_ARG), ("router/src/validation.rs", CHECK)], False),
        ([("launcher/src/main.rs", ARGS)], False),  # a flag that refuses nothing yet
    ],
)
def test_a_new_limit_flag_with_a_default_that_refuses_input_is_high(files, high):
    changes = [mod(path, 4, 0, patch) for path, patch in files]
    a = analyse_offline(commit("feat: support max_image_fetch_size to limit"), changes, "en")
    assert (a.importance is HIGH) is high, a.importance_reason
    if high:
        assert "max_image_fetch_size" in a.importance_reason
