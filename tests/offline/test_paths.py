"""The one path classifier: what kind of file each path names."""
from __future__ import annotations

import pytest

from bot.analysis.offline import FileKind, classify_path


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
