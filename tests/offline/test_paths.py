"""The one path classifier: what kind of file each path names."""

from __future__ import annotations

import pytest

from bot.analysis.offline import FileKind, classify_path
from bot.analysis.offline.paths import generated_origin, is_binary_path, is_lockfile


@pytest.mark.parametrize(
    "path,kind",
    [
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
    ],
)
def test_classify_path(path, kind):
    assert classify_path(path) is kind


# Paths the LLM prompt's old classifier (bot/diffs.py) and the offline rules both sorted, and agreed on.
@pytest.mark.parametrize(
    "path,kind",
    [
        ("src/bot/diffs.py", FileKind.SOURCE),
        ("web/App.tsx", FileKind.SOURCE),
        ("pkg/server/handler.go", FileKind.SOURCE),
        ("tests/test_diffs.py", FileKind.TEST),
        ("web/App.test.tsx", FileKind.TEST),
        ("src/test/java/FooTest.java", FileKind.TEST),
        ("spec/models/user_spec.rb", FileKind.TEST),
        ("Dockerfile.prod", FileKind.BUILD),
        ("requirements-dev.txt", FileKind.DEPENDENCY),
        ("settings.json", FileKind.CONFIG),
        ("docs/index.rst", FileKind.DOCS),
        ("CHANGELOG", FileKind.DOCS),
        ("LICENSE", FileKind.DOCS),
        ("src/history.py", FileKind.SOURCE),
        ("src/latest.py", FileKind.SOURCE),
        ("app/security.py", FileKind.SOURCE),
    ],
)
def test_paths_both_old_classifiers_agreed_on(path, kind):
    assert classify_path(path) is kind


# Where the two disagreed, the answer chosen (README "How it works" says why).
@pytest.mark.parametrize(
    "path,kind",
    [
        ("notebooks/tour.ipynb", FileKind.DOCS),  # tutorials; never ship (the prompt's classifier said code)
        ("examples/parse_model.py", FileKind.DOCS),
        ("crates/ruff_linter/resources/mdtest/flake8-bandit.md", FileKind.TEST),  # markdown tests
        ("crates/ruff/build.rs", FileKind.BUILD),
        ("scripts/release.py", FileKind.TOOLING),
        ("crates/app/tests/snapshots/app__x.snap", FileKind.TEST),
        ("src/__snapshots__/a.test.ts.snap", FileKind.TEST),
        ("crates/ty/src/types/tests.rs", FileKind.TEST),  # Rust's `mod tests;`
        ("crates/ruff_linter/src/rules/pycodestyle/rules/not_tests.rs", FileKind.SOURCE),
        ("crates/uv-resolver/src/lock/export/requirements_txt.rs", FileKind.SOURCE),
        ("crates/ruff_python_parser/resources/inline/err/format_spec.py", FileKind.SOURCE),
        ("crates/uv-virtualenv/src/activator/activate.bat", FileKind.SOURCE),
        ("web/src/Page.astro", FileKind.SOURCE),
        ("web/src/page.test.mjs", FileKind.TEST),
        ("infra/main.tf", FileKind.CONFIG),
        ("Procfile", FileKind.CONFIG),
        ("nix/package.nix", FileKind.BUILD),
        ("docs/intro.mdx", FileKind.DOCS),
        ("guide/intro.mdx", FileKind.DOCS),
        ("MAINTAINERS", FileKind.DOCS),
        ("go.work.sum", FileKind.LOCKFILE),
        ("Package.resolved", FileKind.LOCKFILE),
        ("go.work", FileKind.DEPENDENCY),
        ("gradle/dependencies.lockfile", FileKind.LOCKFILE),
        ("docs/example.lock", FileKind.DOCS),
        ("specs/api_spec.rb", FileKind.TEST),
        ("lib/model.g.dart", FileKind.GENERATED),
        ("external/googletest/gtest.h", FileKind.GENERATED),
        ("crates/ty_python_semantic/resources/mdtest/external/numpy.md", FileKind.TEST),
    ],
)
def test_where_the_old_classifiers_disagreed(path, kind):
    assert classify_path(path) is kind


@pytest.mark.parametrize(
    "path,origin",
    [
        ("vendor/github.com/x/y.go", "vendored"),
        ("web/node_modules/left-pad/index.js", "vendored"),
        ("mypy/typeshed/stdlib/os.pyi", "vendored"),
        ("external/zlib/inflate.c", "vendored"),
        ("src/external/client.py", ""),
        ("api/service.pb.go", "generated"),
        ("static/app.min.js", "generated"),
        ("dist/bundle.js", "generated"),
        ("src/app.py", ""),
        ("tests/snapshots/x.snap", ""),
    ],
)
def test_generated_origin(path, origin):
    assert generated_origin(path) == origin
    assert (classify_path(path) is FileKind.GENERATED) is bool(origin)


def test_binary_and_lockfile_names():
    assert is_binary_path("assets/Logo.PNG") and is_binary_path("model.safetensors")
    assert not is_binary_path("src/app.py") and not is_binary_path("Makefile")
    assert is_lockfile("frontend/yarn.lock") and is_lockfile("uv.lock") and not is_lockfile("docs/example.lock")
