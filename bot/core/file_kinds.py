"""What kind of file a path names — the product's one path classifier.

Everything that sorts files by kind reads `classify_path`: the offline rules (size counts source
only; a commit of tests and docs alone is low), the LLM prompt's diff order (bot/diffs/packing.py),
the answer checks (bot/analysis/answer_schema.py) and the learned profile (bot/taste). Paths only:
no content is read here. It sits in bot/core because both the analyser and the diff selection
below it read it (it was bot/analysis/offline/paths.py, which made bot/diffs import bot/analysis
while bot/analysis imports bot/diffs); what only the offline rules need stays there.
"""

from __future__ import annotations

import enum
import re

from ..i18n import text


class FileKind(str, enum.Enum):
    SOURCE = "source"
    TEST = "test"
    DOCS = "docs"
    CI = "ci"
    BUILD = "build"
    DEPENDENCY = "dependency"  # a manifest that declares dependencies
    LOCKFILE = "lockfile"
    GENERATED = "generated"  # generated or vendored: nobody wrote it here
    CONFIG = "config"
    TOOLING = "tooling"  # benchmarks, scripts, tools: code that does not ship
    OTHER = "other"  # images, data, binaries

    def label(self, zh: bool | str) -> str:
        """The kind's name for the reader (`offline.paths.kind.<kind>`): `zh` is the reader's
        language ("zh", "en") or, as the evidence modules pass it, True for Chinese."""
        lang = zh if isinstance(zh, str) else ("zh" if zh else "en")
        return text(lang, f"offline.paths.kind.{self.value}")


# Kinds that change nothing a user runs: a commit made only of these is low, whatever its size.
NON_RUNTIME = frozenset(
    {FileKind.TEST, FileKind.DOCS, FileKind.CI, FileKind.LOCKFILE, FileKind.GENERATED, FileKind.OTHER}
)

_SOURCE_EXT = frozenset(
    """
py pyi pyx pxd c h cc cpp cxx hh hpp hxx inl cu cuh hip metal cl m mm swift rs go java kt kts scala
groovy js jsx mjs cjs ts tsx mts cts vue svelte rb php cs fs vb lua pl pm r jl zig dart ex exs erl
hrl hs ml mli clj cljs nim v sv vhd sql proto graphql gql thrift sh bash zsh fish ps1 bat cmd html
htm css scss sass less styl astro jinja j2 tmpl tpl mojo triton ptx asm s wgsl glsl hlsl sol elm
""".split()
)
_CONFIG_EXT = frozenset("yaml yml toml ini cfg conf json jsonc json5 properties env xml plist tf tfvars hcl".split())
# Notebooks are docs: in a repository they are tutorials and examples, and never ship.
_DOC_EXT = frozenset("md markdown mdx rst adoc asciidoc txt ipynb tex org textile rdoc pod".split())
PROSE_EXT = _DOC_EXT - {"ipynb"}  # files that are read, not run (issue templates under .github/ too)
_LOCK_NAMES = frozenset(
    """
package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml poetry.lock pipfile.lock uv.lock
pdm.lock cargo.lock gemfile.lock composer.lock go.sum mix.lock pubspec.lock packages.lock.json
flake.lock bun.lockb bun.lock podfile.lock gradle.lockfile conda-lock.yml go.work.sum package.resolved
cartfile.resolved cabal.project.freeze
""".split()
)
_DEP_NAMES = frozenset(
    """
pipfile package.json go.mod cargo.toml gemfile composer.json environment.yml environment.yaml
pubspec.yaml mix.exs podfile packages.config directory.packages.props vcpkg.json conanfile.txt
conanfile.py go.work
""".split()
)
_BUILD_NAMES = frozenset(
    """
cmakelists.txt makefile gnumakefile setup.py setup.cfg pyproject.toml manifest.in build.gradle
build.gradle.kts settings.gradle settings.gradle.kts pom.xml meson.build meson_options.txt build
build.bazel workspace workspace.bazel module.bazel .bazelrc justfile containerfile build.rs
cmakepresets.json configure.ac configure makefile.am sconstruct flake.nix default.nix rakefile build.sbt
""".split()
)
_CI_NAMES = frozenset(
    """
.gitlab-ci.yml jenkinsfile .travis.yml azure-pipelines.yml .drone.yml appveyor.yml
cloudbuild.yaml cloudbuild.yml codecov.yml .codecov.yml .pre-commit-config.yaml tox.ini
noxfile.py .mergify.yml bitbucket-pipelines.yml
""".split()
)
_CI_DIRS = frozenset({".github", ".buildkite", ".circleci", ".gitlab", ".azure-pipelines", ".ci"})
_DOC_NAME_PREFIXES = (
    "readme",
    "changelog",
    "changes",
    "history",
    "license",
    "licence",
    "copying",
    "notice",
    "authors",
    "contributing",
    "code_of_conduct",
    "security.md",
    "citation",
    "releasing",
    "news",
    "contributors",
    "maintainers",
)
DOC_DIRS = frozenset({"docs", "doc", "documentation", "examples", "example", "man", "site"})
_DOC_CONFIG_NAMES = frozenset(
    {"mkdocs.yml", "mkdocs.yaml", ".readthedocs.yml", ".readthedocs.yaml", "docusaurus.config.js"}
)
TEST_DIRS = frozenset(
    {
        "tests",
        "test",
        "__tests__",
        "testing",
        "testdata",
        "test_data",
        "e2e",
        "spec",
        "__snapshots__",
        "fixtures",
        "unittest",
        "unittests",
        "mdtest",
        "snapshots",
        "specs",
        "androidtest",
    }
)
TOOLING_DIRS = frozenset(
    {
        "benchmarks",
        "benchmark",
        "bench",
        "benches",
        "tools",
        "scripts",
        "hack",
        "dev",
        "contrib",
        "misc",
        "playground",
        "fuzz",
        "website",
        ".devcontainer",
        ".agents",
        ".husky",
    }
)
# Test folders named for the kind of test: autotest/, integration_tests/, e2e-tests/, test_utils/.
_TEST_DIR = re.compile(
    r"^(auto|unit|integration|system|smoke|e2e|end2end|regression|functional|acceptance|stress)[-_]?tests?$"
    r"|^tests?[-_]\w+$|^\w+[-_]tests?$"
)
# Benchmarks nested in a package (crates/x/benches/, pkg/benchmarks/) do not ship either.
NESTED_TOOLING_DIRS = frozenset({"benches", "benchmarks", "benchmark"})
# Copied from elsewhere (a package manager, a sync job) or produced by a tool: nobody wrote it here,
# and its content never goes into an LLM prompt (bot/diffs/packing.py).
_VENDORED_DIRS = frozenset(
    {
        "vendor",
        "vendored",
        "_vendor",
        "third_party",
        "third-party",
        "thirdparty",
        "node_modules",
        "bower_components",
        "site-packages",
        ".yarn",
        "typeshed",
    }
)  # stubs copied from python/typeshed by a sync job
# Only at the root: `external/` and `Pods/` hold checked-out dependencies there, while a nested
# `external/` or `pods/` is as likely to be the project's own code (or tests about externals).
_VENDORED_ROOTS = frozenset({"external", "pods"})
_GENERATED_DIRS = frozenset({"generated", "__generated__", "dist"})
_TEST_FILE = re.compile(
    r"(^test_.*\.py$|_test\.(py|go|rs|cc|cpp|c)$|\.(test|spec)\.[cm]?[jt]sx?$|_spec\.rb$"
    r"|^conftest\.py$|^tests?\.rs$|^tests\.py$|\.snap$)"
)
# (Rust's `mod tests;` lives in tests.rs; snapshots — insta, jest — are test expectations.)
_CAMEL_TEST_FILE = re.compile(r"[a-z0-9]Tests?\.(java|kt|cs|swift)$")  # FooTest.java, not latest.java
_GENERATED_FILE = re.compile(
    r"(_pb2(_grpc)?\.pyi?$|\.pb\.(gw\.)?(go|h|cc)$|\.min\.(js|css|mjs)$|\.map$"
    r"|\.generated\.\w+$|_generated\.\w+$|\.gen\.(go|ts)$|\.g\.dart$|\.freezed\.dart$"
    r"|\.designer\.cs$)"
)
DOCKER_FILE = re.compile(r"^(dockerfile(\..*)?|.*\.dockerfile|docker-compose.*\.ya?ml|compose\.ya?ml)$")


_BINARY_EXT = frozenset(
    """
png jpg jpeg gif bmp ico icns webp tif tiff psd ai sketch fig xcf heic avif
pdf doc docx xls xlsx ppt pptx odt ods odp key numbers pages
zip gz tgz bz2 xz 7z rar tar zst lz4 jar war ear aar apk ipa dmg iso deb rpm msi whl egg
so dll dylib exe bin o a lib obj class pyc pyo pyd wasm dex elf
woff woff2 ttf otf eot
mp3 mp4 m4a wav ogg oga flac aac mov avi mkv webm wmv mid midi
db sqlite sqlite3 mdb pkl pickle npy npz h5 hdf5 onnx pt pth ckpt safetensors parquet feather arrow
tflite pb bin dat
""".split()
)


def extension(path: str) -> str:
    """The lower-case extension of a path's file name ('' when it has none)."""
    name = path.rsplit("/", 1)[-1].lower()
    return name.rsplit(".", 1)[1] if "." in name.lstrip(".") else ""


def is_binary_path(path: str) -> bool:
    """Does the file name say binary (images, archives, compiled code, model weights…)? The sources
    mark such files binary whatever the diff tool printed."""
    return extension(path) in _BINARY_EXT


_ARTEFACT_EXT = frozenset({"pyc", "pyo", "class", "o", "obj"})


def is_build_artefact(path: str) -> bool:
    """A file a build writes (`__pycache__/…`, `.pyc`, `.class`, `.o`): committed by mistake, it
    says nothing about the change, so a reader is told how many there were, not their names."""
    return extension(path) in _ARTEFACT_EXT or "__pycache__" in path.split("/")


def generated_origin(path: str) -> str:
    """ "vendored" (copied in), "generated" (a tool wrote it) or "" — from the path alone."""
    parts = path.strip("/").lower().split("/")
    name, dirs = parts[-1], parts[:-1]
    if any(d in _VENDORED_DIRS for d in dirs) or (dirs and dirs[0] in _VENDORED_ROOTS):
        return "vendored"
    if _GENERATED_FILE.search(name) or any(d in _GENERATED_DIRS for d in dirs):
        return "generated"
    return ""


def is_lockfile(path: str) -> bool:
    name = path.strip("/").lower().rsplit("/", 1)[-1]
    return (
        name in _LOCK_NAMES
        or name.endswith(".lockfile")
        or (extension(name) == "lock" and not path.strip("/").lower().startswith("docs/"))
    )


def classify_path(path: str) -> FileKind:
    """The kind of one changed file, from its path alone (checked most specific first)."""
    lower = path.strip("/").lower()
    parts = lower.split("/")
    name, dirs = parts[-1], parts[:-1]
    ext = extension(name)
    if is_lockfile(lower):
        return FileKind.LOCKFILE
    if generated_origin(lower):
        return FileKind.GENERATED
    if name in _CI_NAMES or (dirs and dirs[0] in _CI_DIRS):
        return FileKind.CI
    if name.startswith(_DOC_NAME_PREFIXES) and ext in _DOC_EXT | {""}:
        return FileKind.DOCS
    if (
        _TEST_FILE.search(name)
        or _CAMEL_TEST_FILE.search(path)
        or any(d in TEST_DIRS or _TEST_DIR.match(d) for d in dirs)
    ):
        return FileKind.TEST
    if (dirs and dirs[0] in DOC_DIRS) or (not dirs and name in _DOC_CONFIG_NAMES):
        return FileKind.DOCS
    if (dirs and dirs[0] in TOOLING_DIRS) or any(d in NESTED_TOOLING_DIRS for d in dirs):
        return FileKind.TOOLING
    if (
        name in _BUILD_NAMES
        or DOCKER_FILE.match(name)
        or ext in ("cmake", "bzl", "gradle", "mk", "nix")
        or (dirs and dirs[0] in ("cmake", "docker", "packaging"))
    ):
        return FileKind.BUILD
    if (
        name in _DEP_NAMES
        or re.match(r"^(requirements|constraints).*\.(txt|in)$", name)
        or (dirs and dirs[-1] == "requirements" and ext in ("txt", "in"))
    ):
        return FileKind.DEPENDENCY
    if ext in _SOURCE_EXT:
        return FileKind.SOURCE
    if ext in _CONFIG_EXT or name.startswith(".") or name.endswith(("rc", ".env.example")) or name == "procfile":
        return FileKind.CONFIG
    if ext in _DOC_EXT:
        return FileKind.DOCS
    return FileKind.OTHER
