"""What kind of file a path names, for the offline rules: the classifier itself lives in
bot/core/file_kinds.py (the diff selection in bot/diffs reads it too, and must not import the
analyser); what only these rules ask — is a manifest one of something that ships — is here.
The offline modules import the classifier's names from here as before.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...core.file_kinds import (
    DOC_DIRS,
    DOCKER_FILE,
    NESTED_TOOLING_DIRS,
    NON_RUNTIME,
    PROSE_EXT,
    TEST_DIRS,
    TOOLING_DIRS,
    FileKind,
    classify_path,
    extension,
    generated_origin,
    is_binary_path,
    is_lockfile,
)

if TYPE_CHECKING:
    from ..repo_config import RepoProfile

__all__ = [
    "DOC_DIRS",
    "DOCKER_FILE",
    "NESTED_TOOLING_DIRS",
    "NON_RUNTIME",
    "PROSE_EXT",
    "TEST_DIRS",
    "TOOLING_DIRS",
    "FileKind",
    "classify_path",
    "extension",
    "generated_origin",
    "in_package",
    "is_experimental",
    "is_binary_path",
    "is_lockfile",
    "is_root_manifest",
]


def is_root_manifest(path: str, profile: RepoProfile) -> bool:
    """A manifest of something that ships: at the root, in a declared package, or in any
    directory that is not tooling, tests, docs or examples (a monorepo's `core/Cargo.toml`)."""
    parts = path.strip("/").split("/")
    if len(parts) == 1 or any(in_package(path, p) for p in profile.surface.get("packages", ())):
        return True
    if profile.surface.get("packages"):
        return False
    dirs = [d.lower() for d in parts[:-1]]
    return not any(
        d in TOOLING_DIRS or d in NESTED_TOOLING_DIRS or d in TEST_DIRS or d in DOC_DIRS or d in ("example", "examples")
        for d in dirs
    )


def in_package(path: str, package: str) -> bool:
    package = package.strip("/")
    return bool(package) and (path.startswith(package + "/") or path.rsplit("/", 1)[0] == package)


# The name of a manifest of development, test, docs or CI dependencies (requirements-dev.txt).
DEV_MANIFEST = re.compile(r"(^|[-_./])(dev|test|tests|testing|lint|docs?|typing|bench\w*|ci)([-_.]|$)", re.I)


def shipped_manifest(path: str, profile: RepoProfile) -> bool:
    """A manifest whose dependencies ship: not tooling, not internal, not requirements-dev.txt."""
    name = path.rsplit("/", 1)[-1].lower()
    return (
        is_root_manifest(path, profile)
        and not profile.is_internal(path)
        and not DEV_MANIFEST.search(name.rsplit(".", 1)[0])
    )


# Directories whose code says it carries no stability promise: `trl/experimental/`, `x/unstable/`,
# `torchao/prototype/` (PyTorch's word for the same promise).
EXPERIMENTAL_DIRS = frozenset({"experimental", "unstable", "prototype"})


def is_experimental(path: str, profile: RepoProfile) -> bool:
    """Code without a stability promise: a preview path of the profile, or a directory named so."""
    return profile.is_preview(path) or any(d.lower() in EXPERIMENTAL_DIRS for d in path.strip("/").split("/")[:-1])
