"""Path patterns for watches (bot/globs.py): `**` crosses directories, `*` and `?` do not, a plain
name is that file or everything under it. Pure, table-tested."""
import pytest

from bot.globs import GlobError, matches, normalise, touched_paths, touches
from bot.models import FileChange


@pytest.mark.parametrize("glob,path,expected", [
    ("crates/uv-resolver/**", "crates/uv-resolver/src/lib.rs", True),
    ("crates/uv-resolver/**", "crates/uv-resolver-extra/src/lib.rs", False),
    ("crates/*/Cargo.toml", "crates/uv/Cargo.toml", True),
    ("crates/*/Cargo.toml", "crates/uv/sub/Cargo.toml", False),  # * stays within one segment
    ("crates/**/Cargo.toml", "crates/uv/sub/Cargo.toml", True),
    ("crates/**/Cargo.toml", "crates/Cargo.toml", True),  # **/ is zero or more directories
    ("**/*.py", "setup.py", True),
    ("**/*.py", "a/b/c.py", True),
    ("*.py", "a/b.py", False),
    ("src/?.rs", "src/a.rs", True),
    ("src/?.rs", "src/ab.rs", False),
    ("src/[ab].rs", "src/b.rs", True),
    ("src/[!ab].rs", "src/c.rs", True),
    ("src/[!ab].rs", "src/a.rs", False),
    ("docs", "docs/index.md", True),  # a plain name: the directory and all below it
    ("docs", "docs", True),
    ("docs", "docsite/index.md", False),
    ("docs/", "docs/a/b.md", True),
    ("README.md", "README.md", True),
    ("README.md", "readme.md", False),  # case-sensitive, like git
    ("src/*.py", "src/a.py.bak", False),
])
def test_matches(glob, path, expected):
    assert matches(path, normalise(glob)) is expected


@pytest.mark.parametrize("bad", ["", "   ", "/etc/passwd", "../secrets", "a/../b", "src/[abc", "src/]", "a\\b",
                                 "x" * 201, "tab\there"])
def test_what_cannot_name_a_repository_path_is_refused(bad):
    with pytest.raises(GlobError):
        normalise(bad)


def test_leading_dot_slash_is_dropped_and_a_rename_counts_its_old_path():
    assert normalise("./src/**") == "src/**"
    moved = FileChange(path="new/place.py", status="renamed", additions=0, deletions=0, previous_path="old/place.py")
    assert touched_paths([moved]) == ["new/place.py", "old/place.py"]
    assert touches(touched_paths([moved]), "old/**") and not touches(touched_paths([moved]), "other/**")
