"""The `repo` fixture: a small project in a real git repository, for the commits the tests add."""

from __future__ import annotations

import pytest

from tests.gitrepo import GitRepo
from tests.offline.helpers import CARGO_V1, ENTRY_POINTS_V1, HASHES_V1, OPTIONS_V1, WHEN


@pytest.fixture
def repo(tmp_path):
    r = GitRepo(tmp_path / "app")
    r.commit(
        "Initial import",
        {
            "src/app/entry_points.py": ENTRY_POINTS_V1,
            "src/app/hashes.py": HASHES_V1,
            "Cargo.toml": CARGO_V1,
            "app.schema.json": OPTIONS_V1,
            "crates/app_core/src/lib.rs": "pub struct Resolver {}\n\nimpl Resolver {\n"
            "    pub fn new() -> Self {\n        Resolver {}\n    }\n}\n",
            "tests/test_resolver.py": "def test_a():\n    assert True\n\n\ndef test_b():\n    assert True\n",
            "scripts/release.py": "print('release')\n",
            "uv.lock": 'version = 1\n\n[[package]]\nname = "serde"\nversion = "1.0.228"\n',
        },
        when=WHEN,
    )
    return r
