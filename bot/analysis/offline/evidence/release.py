"""Release evidence: release commits, how shipped artefacts are built (release profiles, compiler
flags, toolchain floors, container images), which runtimes are supported, and the pipeline."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....models import FileChange, Importance
from ..context import Context, Fact, Insight, Risk
from ..lang import name_list
from ..patch import diff_lines, manifest_blocks
from ..paths import DOCKER_FILE, FileKind
from .dependencies import shipped_manifest

if TYPE_CHECKING:
    from ...profile import RepoProfile
    from ..stats import FileStats

_RELEASE_TITLE = re.compile(
    r"^\s*(release|releasing|prepare (for )?release|bump( version)?( to)?|version)\s*:?\s*"
    r"v?\d+\.\d+(\.\d+)?([-.]?\w+)?\s*$|^\s*(prepare )?release v?\d+\.\d+",
    re.I,
)
# "Add support for Python 3.15", "Drop Node 18": who can run the project changes.
_RUNTIME_SUPPORT = re.compile(
    r"\b(support\w*|drop\w*|deprecat\w*|remov\w*|require\w*)\b.*\b(python|cpython|pypy|node(\.?js)?"
    r"|rust|go|cuda|rocm|java|jdk|ruby|php|\.net)\s*v?\d+(\.\d+)?",
    re.I,
)
_RUNTIME_NAME = re.compile(
    r"\b(python|cpython|pypy|node(\.?js)?|rust|go|cuda|rocm|java|jdk|ruby|php|\.net)\s*v?\d+(\.\d+)?", re.I
)
_PROFILE_KEYS = re.compile(
    r"^\s*(panic|lto|codegen-units|opt-level|strip|debug|debug-assertions|overflow-checks"
    r"|incremental|rpath)\s*=\s*(.+?)\s*$"
)
_TOOLCHAIN_FLOOR = re.compile(
    r"""^\s*["']?(rust-version|requires-python|python_requires|msrv)["']?\s*[=:]\s*["']?"""
    r"""([^"',]+)["']?""",
    re.I,
)
_COMPILER_FLAGS = re.compile(
    r"(RUSTFLAGS|rustflags|target-cpu|target-feature|CFLAGS|CXXFLAGS|-march=|-mtune=|-O[0-3s]\b"
    r"|-ffast-math|-flto)"
)
_PANIC_ABORT = re.compile(r"""panic\s*=\s*["']?abort""")


# --- reading the message --------------------------------------------------------------------------


def is_release(*texts: str) -> bool:
    """ "Bump 0.16.4", "Prepare release v2.14.0b1": this project's own version changes."""
    return any(_RELEASE_TITLE.search(t) for t in texts)


def runtime_support(subject: str) -> str:
    """'Python 3.15' in "Add support for Python 3.15", '' when the subject names no runtime change."""
    m = _RUNTIME_SUPPORT.search(subject)
    name = _RUNTIME_NAME.search(m.group(0)) if m else None
    return name.group(0) if name else ""


# --- reading the files ---------------------------------------------------------------------------


def _file_edits(f: FileChange, kind: FileKind, profile: RepoProfile) -> list[str]:
    edits: list[str] = []
    name = f.path.rsplit("/", 1)[-1].lower()
    ships = shipped_manifest(f.path, profile)
    # The image users pull is a shipped artefact: its base, entry point or layout changing counts
    # (an unknown patch too, since any line may be one of those).
    if (
        kind is FileKind.BUILD
        and DOCKER_FILE.match(name)
        and not profile.is_internal(f.path)
        and (
            f.patch is None
            or re.search(r"^[+-]\s*(FROM|WORKDIR|ENTRYPOINT|CMD|USER|EXPOSE|ENV|VOLUME)\b", f.patch, re.M)
        )
    ):
        edits.append(f.path)
    for group, minus, plus in manifest_blocks(f.patch):
        in_profile = group.lower().startswith("profile.") or "profile" in group.lower()
        release_profile = in_profile and not re.search(r"\b(dev|test|bench)\b", group.lower())
        for line in plus or minus:
            m = _PROFILE_KEYS.match(line)
            if m and name == "cargo.toml" and (release_profile or (not group and not in_profile)):
                where = f" [{group}]" if group else ""
                edits.append(f"{m.group(1)} = {m.group(2)}{where}")

            if (
                name in (".cargo/config.toml", "config.toml", "build.rs", "cmakelists.txt", "setup.py")
                and _COMPILER_FLAGS.search(line)
                and (f.path.startswith(".cargo/") or name != "config.toml")
            ):
                flags = (
                    " ".join(
                        dict.fromkeys(
                            re.findall(
                                r"-march=[\w.-]+|-mtune=[\w.-]+|-O[0-3s]\b|-ffast-math|-flto"
                                r"|target-(?:cpu|feature)=\S+",
                                line,
                            )
                        )
                    )
                    or "flags"
                )
                edits.append(f"{flags.strip(chr(34))} ({f.path})")
        old_floor = next((m.group(2).strip() for ln in minus if (m := _TOOLCHAIN_FLOOR.match(ln))), "")
        new_floor = next((m for ln in plus if (m := _TOOLCHAIN_FLOOR.match(ln))), None)
        if new_floor and ships and old_floor != new_floor.group(2).strip():
            span = f"{old_floor} → {new_floor.group(2).strip()}" if old_floor else new_floor.group(2).strip()
            edits.append(f"{new_floor.group(1)} {span}")
    return edits


def release_edits(stats: FileStats, profile: RepoProfile) -> list[str]:
    """Edits that change how shipped artefacts are built: "panic = \"abort\" [profile.release]",
    "rust-version 1.95 → 1.96", a Dockerfile's base image."""
    found: list[str] = []
    for f, kind in stats.files:
        if kind in (FileKind.DEPENDENCY, FileKind.BUILD, FileKind.CONFIG):
            edits = _file_edits(f, kind, profile)
            found += [e for e in edits if e not in found]
    return found


def changelog_entries(stats: FileStats) -> int:
    for f in stats.files:
        if f[0].path.rsplit("/", 1)[-1].lower().startswith(("changelog", "changes", "history", "news")):
            return sum(1 for sign, text in diff_lines(f[0].patch) if sign == "+" and re.match(r"\s*[-*]\s+\S", text))
    return 0


def new_version(stats: FileStats) -> str:
    for f, _ in stats.files:
        for sign, text in diff_lines(f.patch):
            m = re.match(r"""^\s*(?:version|VERSION)\s*[=:]\s*["']v?(\d+\.\d+[\w.+-]*)["']""", text)
            if sign == "+" and m:
                return m.group(1)
    return ""


# --- conclusions ---------------------------------------------------------------------------------


def facts(c: Context) -> list[Fact]:
    facts: list[Fact] = []
    t, d = c.title, c.diff
    if d.release_edits:
        edits = list(d.release_edits)
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"修改了发布产物的构建方式（{name_list(edits, True, 2)}），每个发布的二进制或包都会受影响",
                f"Changes how shipped artefacts are built ({name_list(edits, False, 2)}); "
                "every released binary or package is affected",
                order=44,
            )
        )
    if t.crash and (d.release_edits or d.shipped_dep_changes) and not c.stats.source:
        # The shipped program itself crashed and the fix is in how it is built: every user on the
        # affected platform was hit, whatever the size of the diff.
        names = list(d.release_edits or d.shipped_dep_changes)
        facts.append(
            Fact(
                Importance.HIGH,
                f"修复发布版本的崩溃，改动在构建或依赖（{name_list(names, True, 2)}），影响所有受影响平台的用户",
                f"Fixes a crash of the shipped build through its build or dependency set "
                f"({name_list(names, False, 2)}); every user on the affected platform was hit",
                order=45,
            )
        )
    if t.runtime_support and (c.stats.source or c.stats.of(FileKind.BUILD, FileKind.DEPENDENCY)):
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"改变了支持的运行环境（{t.runtime_support}）",
                f"Changes which runtimes are supported ({t.runtime_support})",
                order=47,
            )
        )
    if t.release:
        facts.append(
            Fact(
                Importance.MEDIUM,
                "发布提交：版本号更新，随附的改动进入正式版本",
                "Release commit: the version changes and everything since the last release ships",
                order=48,
            )
        )
    return facts


def risks(c: Context) -> list[Risk]:
    out: list[Risk] = []
    for edit in c.diff.release_edits[:2]:
        if _PANIC_ABORT.search(edit):
            out.append(
                Risk(
                    42,
                    f"发布二进制改为 {edit}：panic 会直接终止进程，不再展开栈、执行清理或被 catch_unwind 捕获",
                    f"Released binaries now build with {edit}: a panic ends the process at once, with no unwinding, "
                    "no cleanup and no catch_unwind recovery",
                    "确认没有代码依赖 catch_unwind 或 Drop 中的清理，并在发布前跑一遍崩溃路径",
                    "Check nothing relies on catch_unwind or Drop-time cleanup, and exercise the crash paths before release",
                )
            )
        elif re.match(r"(rust-version|requires-python|python_requires|msrv)", edit, re.I):
            out.append(
                Risk(
                    42,
                    f"最低工具链要求变为 {edit}，用更旧的编译器或解释器从源码构建会失败",
                    f"The minimum toolchain is now {edit}; building or installing from source with an older one fails",
                    "检查打包和下游构建环境的工具链版本",
                    "Check the toolchain versions of packagers and downstream builds",
                )
            )
        elif DOCKER_FILE.match(edit.rsplit("/", 1)[-1].lower()):
            out.append(
                Risk(
                    42,
                    f"容器镜像的定义变了（{edit}），挂载或复制到旧路径、依赖旧层的部署可能失效",
                    f"The container image definition changes ({edit}); deployments mounting into or copying from "
                    "the old layout may break",
                    "用新镜像在预发环境跑一遍部署",
                    "Roll the new image through staging first",
                )
            )
        else:
            out.append(
                Risk(
                    42,
                    f"所有发布产物的构建方式都变了（{edit}），问题会在所有平台同时出现",
                    f"Every released artefact is built differently ({edit}); a problem shows on every install at once",
                    "在各目标平台上验证发布候选版本",
                    "Verify a release candidate on each target platform",
                )
            )
    support = c.title.runtime_support
    if support:
        out.append(
            Risk(
                46,
                f"对 {support} 的支持是新的或有变化，相应的构建和 CI 可能尚不完整",
                f"Support for {support} is new or changed; wheels, builds or CI for it may be incomplete",
                f"在 {support} 上跑一遍你的测试",
                f"Run your test suite on {support}",
            )
        )
    if c.title.release:
        out.append(
            Risk(
                60,
                "发布包含自上次发布以来的所有改动，其中的回归会一起到达用户",
                "The release carries every change since the last one; any regression among them reaches users at once",
                "先阅读更新日志中与你相关的条目",
                "Read the changelog entries that concern you before upgrading",
                fallback=True,
            )
        )
    if FileKind.CI in c.stats.kinds:
        ci = [f.path for f in c.stats.of(FileKind.CI)]
        out.append(
            Risk(
                66,
                f"流水线（{name_list(ci, True, 2)}）有变化，发布或检查步骤可能失败或被跳过",
                f"The pipeline ({name_list(ci, False, 2)}) changes; a release or check step may fail or be skipped",
                "观察下一次发布或 CI 运行",
                "Watch the next release or CI run",
                fallback=True,
            )
        )
    return out


def insights(c: Context) -> list[Insight]:
    return []
