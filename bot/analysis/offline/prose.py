"""The sentences a reader sees first: the summary (what changed, in whole sentences) and the
impact (who is affected: users of X, operators of Y — not a file census)."""

from __future__ import annotations

import re

from ...models import ChangeType, Importance
from .context import Context
from .evidence.behaviour import SERVER_TOKENS
from .evidence.dependencies import dependency_updates
from .evidence.release import changelog_entries, new_version
from .lang import name_list
from .message import clean_prose, first_paragraphs, whole_sentences
from .paths import FileKind
from .stats import where_names
from .title import TAG_TYPES, norm_tag


def _update_text(updates: list[tuple[str, str, str]], files: list[str], zh: bool) -> str:
    shown = [f"{n} {o} → {v}" for n, o, v in updates[:4]]
    more = len(updates) - len(shown)
    text = ", ".join(shown) + (f" (+{more})" if more > 0 else "")
    where = name_list(files, zh, 2)
    return f"{text}（{where}）" if zh else f"{text} ({where})"


def build_summary(c: Context, importance: Importance, zh: bool) -> str:
    """Whole sentences: the author's own (cut only at a sentence end), a dependency update as
    'name old → new (file)', a release as its version and changelog size, else what changed where."""
    if c.ctype is ChangeType.DEPENDENCIES or c.commit.author.lower().endswith("[bot]"):
        updates = dependency_updates(c.commit, c.stats, c.title)
        if updates:
            files = [
                f.path
                for f, k in c.stats.files
                if k in (FileKind.LOCKFILE, FileKind.DEPENDENCY, FileKind.CI, FileKind.BUILD, FileKind.CONFIG)
            ]
            if not files and c.stats.files:
                files = [c.stats.files[0][0].path]
            text = _update_text(updates, files, zh) if files else ", ".join(f"{n} {o} → {v}" for n, o, v in updates)
            return f"依赖更新：{text}。" if zh else f"{text}."
    if c.title.release:
        m = re.search(r"v?(\d+\.\d+[\w.+-]*)", c.title.subject)
        version = m.group(1) if m else new_version(c.stats)
        entries = changelog_entries(c.stats)
        if zh:
            return f"发布 {version or '新版本'}" + (f"，更新日志新增 {entries} 条" if entries else "") + "。"
        return f"Release {version or 'commit'}" + (f"; the changelog gains {entries} entries" if entries else "") + "."
    limit = 200 if importance is Importance.LOW else 360
    para = first_paragraphs(c.commit.body, 1200)
    if importance is Importance.LOW:
        para = para.split("\n", 1)[0]  # one paragraph for a one-line entry
    text = whole_sentences(para.replace("\n", " "), limit) if para else ""
    if text and len(re.findall(r"\w+", text)) < 4:
        text = ""
    where = where_names(c.stats, c.diff.hunk_names, zh)
    if c.ctype is ChangeType.REVERT and c.title.reverted_title:
        inner = clean_prose(c.title.reverted_title).rstrip(".。")
        if zh:
            return f"回滚「{inner}」。" + (f"改动位于 {where}。" if where else "")
        return f"Reverts “{inner}”." + (f" Changes {where}." if where else "")
    if not text:
        subject = clean_prose(c.title.subject).rstrip(".。") or c.commit.title
        if zh:
            return f"提交标题：「{subject}」。" + (f"改动位于 {where}。" if where else "")
        subject = subject[:1].upper() + subject[1:]
        return f"{subject}." + (f" Changes {where}." if where else "")
    if zh:
        return f"提交说明：「{text}」" + (f"改动位于 {where}。" if where and importance is not Importance.LOW else "")
    return text


# --- who is affected ---------------------------------------------------------------------------

_GROUP_DIRS = frozenset(
    {"crates", "packages", "libs", "lib", "modules", "plugins", "apps", "components", "services", "pkg", "cmd", "src"}
)
_NOT_AREAS = frozenset({"misc", "minor", "chore", "wip", "nfc", "trivial", "small", "core"})


def _component(path: str) -> str:
    parts = path.strip("/").split("/")
    if len(parts) >= 3 and parts[0] in _GROUP_DIRS:
        return parts[1]
    if len(parts) >= 2:
        return parts[0]
    return ""


def _audiences(c: Context, zh: bool) -> list[str]:
    d, t = c.diff, c.title
    out: list[str] = []

    def add(zh_text: str, en_text: str) -> None:
        text = zh_text if zh else en_text
        if text not in out:
            out.append(text)

    if d.release_edits:
        add(
            f"所有安装发布二进制或包的用户（{name_list(list(d.release_edits), True, 2)}）",
            f"everyone installing the released binaries or packages ({name_list(list(d.release_edits), False, 2)})",
        )
    if d.removed_flags:
        add(
            f"传入 {name_list(list(d.removed_flags), True, 2)} 的脚本",
            f"scripts passing {name_list(list(d.removed_flags), False, 2)}",
        )
    if d.removed_api:
        add(
            f"调用 {name_list(list(d.removed_api), True, 2)} 的代码",
            f"code calling {name_list(list(d.removed_api), False, 2)}",
        )
    if d.default_changes:
        key = d.default_changes[0][1]
        add(f"未显式设置 {key} 的部署", f"deployments that leave {key} unset")
    labels = {
        "cli": ("命令行用户", "command-line users"),
        "settings": ("通过配置使用它的用户", "users who configure it"),
        "env": ("设置环境变量的用户", "users who set its environment variables"),
        "formats": ("读写其文件格式的工具", "tools that read or write its file formats"),
        "packages": ("导入其公开包的代码", "code importing its public packages"),
    }
    for kind in d.surface_kinds:
        add(*labels[kind])
    if d.shipped_dep_changes:
        add(
            f"安装本项目的用户（依赖 {name_list(list(d.shipped_dep_changes), True, 2)} 变化）",
            f"anyone installing it (dependency {name_list(list(d.shipped_dep_changes), False, 2)} changes)",
        )
    tags = [tag for tag in t.tags if norm_tag(tag) not in TAG_TYPES and norm_tag(tag) not in _NOT_AREAS]
    comps: list[str] = []
    for f in c.stats.source:
        if c.profile.is_internal(f.path):
            continue
        comp = _component(f.path).lstrip("_")
        if comp and comp not in comps:
            comps.append(comp)
    server = any(
        set(re.split(r"[/.]", f.path.lower())) & SERVER_TOKENS
        or re.search(r"(^|[/_-])(server|lsp)([/_.-]|$)", f.path.lower())
        for f in c.stats.source
    )
    if server:
        who = tags[0] if tags else (comps[0] if comps else "")
        add(
            f"通过语言服务器使用 {who} 的编辑器用户" if who else "语言服务器的编辑器用户",
            f"editor users of the {who} language server" if who else "editor users of the language server",
        )
    if tags:
        add(
            f"{tags[0]} 的用户" + (f"（{name_list(comps, True, 2)}）" if comps else ""),
            f"users of {tags[0]}" + (f" ({name_list(comps, False, 2)})" if comps else ""),
        )
    elif comps:
        add(f"{name_list(comps, True, 2)} 的使用者", f"users of {name_list(comps, False, 2)}")
    if not out and c.stats.of(FileKind.CI):
        add("维护者（CI 与发布流水线）", "maintainers (CI and the release pipeline)")
    if not out and c.stats.of(FileKind.TOOLING, FileKind.TEST, FileKind.DOCS):
        add("贡献者（工具、测试或文档）", "contributors (tooling, tests or docs)")
    return out


def build_impact(c: Context, zh: bool, limit: int = 3) -> str:
    """Who is affected, in one sentence: users of X, operators of Y — not a file census."""
    who = _audiences(c, zh)[:limit]
    if not who:
        return ""
    if zh:
        return "影响：" + "；".join(who) + "。"
    text = ", ".join(who[:-1]) + (" and " if len(who) > 1 else "") + who[-1]
    return f"Affects {text}."
