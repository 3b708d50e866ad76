"""Issue 33 §1, round 6: highs the diff shows (every high of the fifth blind set was rated medium).
Each rule is a table: the case it was made for, the neighbours it must leave at medium or below."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import HIGH, MEDIUM, commit, gone, mod, removed_patch

# --- a dependency floor above every install of the old requirement --------------------------------


def _setup(old: list[str], new: list[str]) -> str:
    lines = [f"-        {ln}" for ln in old] + [f"+        {ln}" for ln in new]
    return f"@@ -118,{len(old) + 1} +118,{len(new) + 1} @@ setup(\n" + "\n".join(lines) + "\n     ],\n"


@pytest.mark.parametrize(
    "old, new, high",
    [
        # The release build's range is left behind by its new pin: every install of it must upgrade.
        (
            [
                "(",
                '    "transformers>=5.9.0,<=5.14.1"',
                '    if BUILD_TYPE == "release"',
                '    else "transformers>=5.9.0"',
                "),",
            ],
            ['("transformers==5.15.0" if BUILD_TYPE == "release" else "transformers>=5.15.0"),'],
            True,
        ),
        # A 0.x pin moved to the next minor: a new major by convention.
        (['"compressed-tensors==0.17.1",'], ['"compressed-tensors==0.18.0",'], True),
        # A floor across a major version.
        (['"huggingface-hub>=0.34.0,<2.0",'], ['"huggingface-hub>=1.23.0,<2.0",'], True),
        # A companion package pinned in lockstep, next minor of a 1.x or later: not high.
        (['"pydantic-core==2.47.0",'], ['"pydantic-core==2.48.0",'], False),
        # A floor raised within the versions the old requirement allowed: not high.
        (['"nvidia-cutlass-dsl>=4.5.0",'], ['"nvidia-cutlass-dsl==4.7.0",'], False),
        (['"ast-serialize>=0.7.0,<1.0.0",'], ['"ast-serialize>=0.8.0,<1.0.0",'], False),
    ],
)
def test_a_dependency_floor_above_every_old_install_is_high(old, new, high):
    files = [mod("setup.py", len(new), len(old), _setup(old, new))]
    a = analyse_offline(commit("Update the requirements in setup.py"), files, "en")
    assert (a.importance is HIGH) is high, a.importance_reason
    if high:
        assert "Raises the minimum of" in a.importance_reason


def test_a_development_extra_raising_its_floor_is_not_high():
    patch = (
        "@@ -40,3 +40,3 @@ extras_require={\n"
        '     "dev": [\n'
        '-        "pytest==7.4.0",\n'
        '+        "pytest==8.1.0",\n'
        "     ],\n"
    )
    a = analyse_offline(commit("Update dev requirements"), [mod("setup.py", 1, 1, patch)], "en")
    assert a.importance is not HIGH


# --- removed API the docs showed ------------------------------------------------------------------

GATHERER = removed_patch(
    "from llmcompressor.modifiers import Modifier",
    "",
    "",
    "class IMatrixGatherer(Modifier):",
    '    """Collects importance statistics in a calibration pass."""',
    "",
    "    def on_initialize(self, state):",
    "        return True",
)
GUIDE = (
    "@@ -10,4 +10,1 @@ ## Observers\n"
    " Observers collect statistics.\n"
    "-The `IMatrixGatherer` modifier gathers them in a separate pass:\n"
    "-\n"
    "-    IMatrixGatherer(ignore=['lm_head'])\n"
)


@pytest.mark.parametrize(
    "path, docs, expected",
    [
        ("src/llmcompressor/modifiers/transform/imatrix/base.py", True, HIGH),  # users were shown it
        ("src/llmcompressor/modifiers/transform/imatrix/base.py", False, MEDIUM),  # nobody was told of it
        ("src/llmcompressor/experimental/imatrix/base.py", True, MEDIUM),  # no stability promise
    ],
)
def test_removed_api_the_docs_showed_is_high(path, docs, expected):
    files = [gone(path, 8, GATHERER)] + ([mod("docs/guides/observers.md", 0, 3, GUIDE)] if docs else [])
    a = analyse_offline(commit("Remove the imatrix gatherer (#2920)"), files, "en")
    assert a.importance is expected, a.importance_reason
    if expected is HIGH:
        assert "IMatrixGatherer" in a.importance_reason


# --- names dropped from a top package's exports ---------------------------------------------------

EXPORTS = (
    "@@ -1,8 +1,5 @@\n"
    " from torchao.kernel.bsr_triton_ops import bsr_dense_addmm\n"
    "-from torchao.kernel.intmm import int_scaled_matmul, safe_int_mm\n"
    " \n"
    " __all__ = [\n"
    '     "bsr_dense_addmm",\n'
    '-    "safe_int_mm",\n'
    '-    "int_scaled_matmul",\n'
    " ]\n"
)
ALIASED = EXPORTS.replace(" ]\n", " ]\n+safe_int_mm = int8_mm\n+int_scaled_matmul = int8_scaled_mm\n")


@pytest.mark.parametrize(
    "path, patch, expected",  # MEDIUM: anything below high
    [
        ("torchao/kernel/__init__.py", EXPORTS, HIGH),  # `from torchao.kernel import safe_int_mm` fails
        ("src/torchao/kernel/__init__.py", EXPORTS, HIGH),
        ("torchao/kernel/__init__.py", ALIASED, MEDIUM),  # the old names stay as aliases
        ("torchao/ops/kernel/fused/__init__.py", EXPORTS, MEDIUM),  # a deep package groups implementation
        ("torchao/_kernel/__init__.py", EXPORTS, MEDIUM),  # a private package promises nothing
        ("torchao/prototype/__init__.py", EXPORTS, MEDIUM),  # nor does a prototype
    ],
)
def test_names_dropped_from_a_top_package_s_exports_are_high(path, patch, expected):
    files = [mod(path, patch.count("\n+"), 3, patch), mod("torchao/kernel/intmm.py", 12, 3)]
    a = analyse_offline(commit("Move int8 matmul kernels into the int8 workflow"), files, "en")
    assert (a.importance is HIGH) is (expected is HIGH), a.importance_reason


# --- a public function's returned tuple grows -----------------------------------------------------


def _returns(header: str, indent: str, new: str) -> str:
    return (
        f"@@ -40,6 +40,7 @@ {header}\n"
        f" {indent}recv = dispatch(x, topk)\n"
        f"+{indent}total = recv.shape[0]\n"
        f"-{indent}return recv, handle\n"
        f"+{indent}return {new}\n"
    )


@pytest.mark.parametrize(
    "path, header, indent, new, expected",
    [
        ("transformer_engine/jax/moe.py", "def moe(x, topk):", "    ", "recv, handle, total", HIGH),
        ("transformer_engine/jax/moe.py", "def moe(x, topk):", "    ", "(recv, handle, total)", HIGH),
        ("transformer_engine/jax/moe.py", "def moe(x, topk):", "    ", "recv, handle", MEDIUM),  # same arity
        ("transformer_engine/jax/moe.py", "class MoE:", "        ", "recv, handle, total", MEDIUM),  # a method
        ("transformer_engine/jax/_moe.py", "def moe(x, topk):", "    ", "recv, handle, total", MEDIUM),  # private
        ("transformer_engine/jax/moe.py", "def _moe(x, topk):", "    ", "recv, handle, total", MEDIUM),
    ],
)
def test_a_public_function_returning_more_values_is_high(path, header, indent, new, expected):
    patch = _returns(header, indent, new)
    files = [mod(path, 2, 1, patch), mod("transformer_engine/jax/ep.py", 14, 2)]
    a = analyse_offline(commit("[JAX] EP dispatch with overflow detection option (#3277)"), files, "en")
    assert (a.importance is HIGH) is (expected is HIGH), a.importance_reason
    if expected is HIGH:
        assert "moe()" in a.importance_reason
        assert any("unpack" in r for r in a.risks)
