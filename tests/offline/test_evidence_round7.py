"""Issue 33 §1, round 7: what users install and run, from the diff (the sixth blind set's missed
highs and small changes rated low). Each rule: the case it was made for, and the neighbours it
must leave alone."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import HIGH, LOW, MEDIUM, commit, mod

# --- install extras --------------------------------------------------------------------------------

NEURONX = (
    "@@ -56,7 +56,6 @@ EXTRAS_REQUIRE = {\n"
    '     "habana": ["optimum-habana>=1.17.0"],\n'
    '-    "neuronx": ["optimum-neuron[neuronx]>=0.0.28"],\n'
    '     "graphcore": "optimum-graphcore",\n'
)
TIMM = (
    "@@ -71,9 +71,8 @@ EXTRAS_REQUIRE = {\n"
    '     "exporters": [\n'
    '         "onnx",\n'
    '-        "timm",\n'
    '         "transformers>=4.36",\n'
    "     ],\n"
)
MOVED = (
    "@@ -43,6 +43,6 @@ EXTRAS_REQUIRE = {\n"
    '-    "ipex": "optimum-intel[ipex]>=1.23.0",\n'
    '     "openvino": "optimum-intel[openvino]>=1.23.0",\n'
    '+    "ipex": "optimum-intel[ipex]>=1.23.0",\n'
)
DEV = '@@ -40,4 +40,3 @@ EXTRAS_REQUIRE = {\n     "quality": ["ruff"],\n-    "dev": ["pytest", "black"],\n'
PYPROJECT = (
    "@@ -30,6 +30,4 @@ dependencies = [\n"
    " [project.optional-dependencies]\n"
    ' cli = ["click>=8"]\n'
    '-neuronx = ["optimum-neuron>=0.0.28"]\n'
    "-\n"
)


@pytest.mark.parametrize(
    "path, patch, level",
    [
        ("setup.py", NEURONX, HIGH),  # `pip install optimum[neuronx]` no longer pulls optimum-neuron
        ("pyproject.toml", PYPROJECT, HIGH),
        ("setup.py", TIMM, MEDIUM),  # an extra pulls less
        ("setup.py", MOVED, MEDIUM),  # moved within the table: nothing dropped, but the extras' lines change
        ("setup.py", DEV, LOW),  # the project's own development extra
    ],
)
def test_install_extras_dropped_are_high_and_changed_medium(path, patch, level):
    a = analyse_offline(commit("Update setup.py"), [mod(path, 1, 1, patch)], "en")
    assert a.importance is level, a.importance_reason
    if level is HIGH:
        assert "neuronx" in a.importance_reason


# --- a minimum version the code checks at run time -------------------------------------------------

CLI = (
    "@@ -36,7 +36,7 @@ from lightning.pytorch.utilities import rank_zero_warn\n"
    '-_JSONARGPARSE_SIGNATURES_AVAILABLE = RequirementCache("jsonargparse[signatures]>=4.27.7")\n'
    '+_JSONARGPARSE_SIGNATURES_AVAILABLE = RequirementCache("jsonargparse[jsonnet,signatures]>=4.39")\n'
)
TORCH_MIN = (
    "@@ -20,3 +20,3 @@ from packaging import version\n"
    '-TORCH_MINIMUM_VERSION = version.parse("1.11.0")\n'
    '+TORCH_MINIMUM_VERSION = version.parse("2.1.0")\n'
)
LOWERED = (
    "@@ -20,3 +20,3 @@ from packaging import version\n"
    '-TORCH_MINIMUM_VERSION = version.parse("2.1.0")\n'
    '+TORCH_MINIMUM_VERSION = version.parse("1.11.0")\n'
)


@pytest.mark.parametrize(
    "path, patch, high",
    [
        ("src/lightning/pytorch/cli.py", CLI, True),
        ("optimum/utils/import_utils.py", TORCH_MIN, True),
        ("optimum/utils/import_utils.py", LOWERED, False),  # older installs now accepted: nobody is refused
        ("tests/test_cli.py", CLI, False),  # a test's requirement checks nothing users run
    ],
)
def test_a_minimum_version_checked_at_run_time_raised_is_high(path, patch, high):
    a = analyse_offline(commit("Require a newer version"), [mod(path, 1, 1, patch)], "en")
    assert (a.importance is HIGH) is high, a.importance_reason
    if high:
        assert "checks at run time" in a.importance_reason


# --- a server that is not a language server ------------------------------------------------------

MODEL_SERVER = (
    "@@ -410,7 +410,8 @@ class FlashCausalLM(Model):\n"
    "         if batch.prefilling:\n"
    "-            position_ids = batch.position_ids\n"
    "+            position_ids = batch.position_ids.clone()\n"
    "+            position_ids += batch.cache_lengths\n"
    "         return self.model.forward(input_ids, position_ids)\n"
)
HOVER = (
    "@@ -20,7 +20,8 @@ pub(crate) fn hover(\n"
    "     let range = snapshot.range();\n"
    "-    let contents = render(range);\n"
    "+    let contents = render(range, snapshot.encoding());\n"
    "+    lsp_types::Hover { contents, range: None }\n"
)


@pytest.mark.parametrize(
    "path, patch, editors",
    [
        # TGI's model server: its users are clients of an HTTP API, not editors
        ("server/text_generation_server/models/flash_causal_lm.py", MODEL_SERVER, False),
        ("crates/ruff_server/src/server/api/requests/hover.rs", HOVER, True),  # a language server's hover
    ],
)
def test_only_a_language_server_is_said_to_reach_editors(path, patch, editors):
    a = analyse_offline(commit("Fix position ids"), [mod(path, 2, 1, patch)], "en")
    said = " ".join((a.impact, *a.risks))
    assert ("editor" in said) is editors, said
