"""Behaviour changes: reverts, changed defaults, new command-line flags, crashes and pathological
slowness fixed, the public surface a profile declares, and the areas (parser, language server,
serializers, GPU kernels …) whose changes reach users in a recognisable way."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....models import ChangeType, FileChange, Importance
from ..context import Context, Fact, Insight, Risk
from ..lang import clip, count_en, name_list
from ..message import first_paragraphs
from ..patch import assignments, change_blocks
from ..paths import FileKind, extension
from ..stats import runtime_lines, where_names

if TYPE_CHECKING:
    from ...profile import RepoProfile
    from ..patch import SourceScan
    from ..stats import FileStats

_CRASH_WORDS = re.compile(
    r"\b(crash\w*|segfault\w*|segmentation fault|illegal instruction|invalidinstruction"
    r"|sigill|sigsegv|core dump\w*|panic(s|ked)?|stack overflow)\b",
    re.I,
)
_PATHOLOGY_WORDS = re.compile(
    r"\b(exponential\w*|quadratic\w*|hang(s|ing)?|pathological\w*|blow-?up"
    r"|never (terminat|finish)\w*|super-?linear)\b",
    re.I,
)
_PRESERVING = re.compile(
    r"\b(pure(ly)? refactor\w*|no (functional|behaviou?r(al)?) changes?|behaviou?r[- ]preserving"
    r"|without changing (any of )?the (logic|behaviou?r)|should(™)? have no effect"
    r"|no user[- ]visible change\w*|does not change (the )?behaviou?r|non-functional change)\b",
    re.I,
)
_DEFAULT_WORDS = re.compile(
    r"\b(by default|defaults? to|change[sd]? (the )?defaults?|new defaults?"
    r"|default value)\b",
    re.I,
)
_CONFIG_TOKENS = frozenset(
    {
        "config",
        "configs",
        "configuration",
        "settings",
        "defaults",
        "default",
        "envs",
        "env",
        "options",
        "constants",
        "flags",
        "conf",
        "arg_utils",
        "cli_args",
        "args",
    }
)
# Pins of the contributors' toolchain, not settings a user has.
_TOOLCHAIN_PIN = re.compile(
    r"^(rust-toolchain(\.toml)?|\.python-version|\.nvmrc|\.node-version|\.tool-versions"
    r"|\.ruby-version|\.go-version)$"
)
SMALL_REVERT = 20  # source lines: backing out less than this is a small correction
_GPU_EXT = frozenset({"cu", "cuh", "hip", "metal", "cl", "ptx", "triton", "wgsl"})
SERVER_TOKENS = frozenset({"server", "lsp", "language_server", "languageserver"})
_PARSER_TOKENS = frozenset({"parser", "lexer", "grammar", "tokenizer", "parse"})
_OUTPUT_TOKENS = frozenset(
    {
        "serializer",
        "serializers",
        "serialize",
        "serialization",
        "json_schema",
        "serde",
        "serializer.rs",
        "serializers.py",
    }
)
_CONCURRENCY = re.compile(
    r"\b(race|races|racy|deadlock\w*|lock(s|ing)?|thread\w*|concurren\w*|async\w*|atomic\w*)\b", re.I
)
_LIMIT_WORDS = re.compile(r"\b(limit\w*|budget\w*|bound(ed|s)?|cap(ped|s)?|threshold\w*|max(imum)?)\b", re.I)
_RECURSION_WORDS = re.compile(r"\b(recursi\w*|cycl(e|es|ic)|fixpoint|self-referential)\b", re.I)
_MESSAGE_WORDS = re.compile(r"\b(diagnostics?|error messages?|messages?|display|hover|signature help)\b", re.I)
_MEMORY_WORDS = re.compile(r"\b(gc|garbage|leak\w*|memory|refcount\w*|lifetimes?)\b", re.I)
_CHECK_WORDS = re.compile(r"\b(rule|lint|check)s?\b", re.I)


# --- reading the message --------------------------------------------------------------------------


def crash(text: str) -> bool:
    """The title or body speaks of a crash of the program."""
    return bool(_CRASH_WORDS.search(text))


def pathology(text: str) -> bool:
    """Exponential blow-ups, hangs."""
    return bool(_PATHOLOGY_WORDS.search(text))


def preserving(text: str) -> bool:
    """The author says the behaviour does not change."""
    return bool(_PRESERVING.search(text))


def default_change(title_text: str) -> bool:
    return bool(_DEFAULT_WORDS.search(title_text))


# --- reading the files ---------------------------------------------------------------------------


def _is_config_path(path: str, kind: FileKind) -> bool:
    if kind is FileKind.CONFIG:
        return True
    if kind is not FileKind.SOURCE:
        return False
    tokens = set(re.split(r"[/.]", path.lower()))
    return bool(tokens & _CONFIG_TOKENS) or path.lower().rsplit("/", 1)[-1].split(".")[0].endswith("_config")


def _file_default_changes(f: FileChange, kind: FileKind) -> list[tuple[str, str, str, str]]:
    changes = []
    for minus, plus in change_blocks(f.patch):
        if not minus or not plus:
            continue
        old = assignments(minus, kind is FileKind.CONFIG)
        new = assignments(plus, kind is FileKind.CONFIG)
        for key in old.keys() & new.keys():
            a, b = old[key].strip("\"'"), new[key].strip("\"'")
            if a != b:
                changes.append((f.path, key, old[key], new[key]))
    # A targeted edit changes a default; rewriting many values is a data table (tuned kernel
    # configs, fixtures), which would make every such commit look like a behaviour change.
    return changes if len(changes) <= 3 else []


def default_changes(stats: FileStats, profile: RepoProfile) -> list[tuple[str, str, str, str]]:
    """(path, key, old, new) for each literal default changed in a config file or settings module."""
    found: list[tuple[str, str, str, str]] = []
    for f, kind in stats.files:
        if (
            _is_config_path(f.path, kind)
            and not profile.is_internal(f.path)
            and not _TOOLCHAIN_PIN.match(f.path.rsplit("/", 1)[-1].lower())
        ):
            found.extend(_file_default_changes(f, kind))
    return found


def added_flags(scan: SourceScan) -> list[str]:
    return sorted(scan.flags_added - scan.flags_removed - scan.hidden_flags)


def gpu_kernels(stats: FileStats) -> list[str]:
    return [f.path for f in stats.source if extension(f.path) in _GPU_EXT]


def surface_kinds(stats: FileStats, profile: RepoProfile) -> list[str]:
    """The profile's surface kinds ("cli", "settings" …) the files touch, in file order."""
    kinds: list[str] = []
    for f, _ in stats.files:
        surface = profile.surface_kind(f.path)
        if surface and surface not in kinds:
            kinds.append(surface)
    return kinds


def _paths_with(c: Context, tokens: frozenset) -> list[str]:
    """Source paths with one of `tokens` as a whole directory or file-stem name."""
    return [
        f.path
        for f in c.stats.source
        if set(re.split(r"[/.]", f.path.lower())) & tokens and not c.profile.is_internal(f.path)
    ]


# --- conclusions ---------------------------------------------------------------------------------


def facts(c: Context) -> list[Fact]:
    facts: list[Fact] = []
    t, d = c.title, c.diff
    if c.ctype is ChangeType.REVERT and c.stats.source_lines >= SMALL_REVERT:
        inner = clip(t.reverted_title, 60)
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"回滚了已合入的改动{f'「{inner}」' if inner else ''}，依赖它的代码需要复查",
                f"Reverts a change that had landed{f' (“{inner}”)' if inner else ''}; "
                "anything relying on it needs checking",
                order=40,
            )
        )
    if d.default_changes:
        _, key, old, new = d.default_changes[0]
        more_zh = f"等 {len(d.default_changes)} 项" if len(d.default_changes) > 1 else ""
        more_en = f" and {len(d.default_changes) - 1} more" if len(d.default_changes) > 1 else ""
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"修改了配置默认值 {key}（{old} → {new}）{more_zh}",
                f"Changes the default of {key} ({old} → {new}){more_en}",
                order=41,
            )
        )
    elif (
        t.default_change
        and c.ctype not in (ChangeType.DOCS, ChangeType.TESTS)
        and runtime_lines(c.stats, c.profile)
        and c.stats.source
    ):
        facts.append(
            Fact(
                Importance.MEDIUM,
                "标题表明默认行为有变化，未显式配置的部署会受影响",
                "The title says a default behaviour changes; deployments relying on defaults are affected",
                order=41,
            )
        )
    if d.added_flags:
        flags = d.added_flags
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"新增命令行参数 {name_list(flags, True)}",
                f"Adds command-line {'flag' if len(flags) == 1 else 'flags'} {name_list(flags, False)}",
                order=42,
            )
        )
    if t.pathology and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS, ChangeType.CI_BUILD) and c.stats.source_lines:
        facts.append(
            Fact(
                Importance.MEDIUM,
                "消除了指数级膨胀或卡死，真实代码上会更快或不再挂起",
                "Removes an exponential blow-up or hang that real inputs hit",
                order=46,
            )
        )
    if (
        c.profile.declared
        and d.surface_kinds
        and c.stats.source_lines
        and c.ctype not in (ChangeType.REFACTOR, ChangeType.TESTS, ChangeType.DOCS)
    ):
        kinds = "、".join(d.surface_kinds), ", ".join(d.surface_kinds)
        facts.append(
            Fact(
                Importance.MEDIUM, f"改动了公开接口（{kinds[0]}）", f"Changes the public surface ({kinds[1]})", order=49
            )
        )
    return facts


def risks(c: Context) -> list[Risk]:
    out: list[Risk] = []

    def add(order: int, risk_zh: str, risk_en: str, rec_zh: str, rec_en: str) -> None:
        out.append(Risk(order, risk_zh, risk_en, rec_zh, rec_en))

    stats, diff, title = c.stats, c.diff, c.title
    names_zh, names_en = where_names(stats, diff.hunk_names, True), where_names(stats, diff.hunk_names, False)
    if c.ctype is ChangeType.REVERT:
        what = f"「{clip(title.reverted_title, 60)}」" if title.reverted_title else ""
        what_en = f" (“{clip(title.reverted_title, 60)}”)" if title.reverted_title else ""
        sha = f"（{c.commit.reverts[:7]}）" if c.commit.reverts else ""
        sha_en = f" ({c.commit.reverts[:7]})" if c.commit.reverts else ""
        add(
            40,
            f"被回滚的改动{what}{sha}不再生效，已依赖它的代码或配置会受影响",
            f"The reverted change{what_en}{sha_en} no longer applies; code or config relying on it is affected",
            "检查你是否已依赖被回滚的改动，并留意它之后是否会重新合入",
            "Check whether you already relied on the reverted change, and watch for it to be re-landed",
        )
    if diff.default_changes:
        path, key, old, new = diff.default_changes[0]
        add(
            41,
            f"{path} 中 {key} 的默认值从 {old} 改为 {new}，未显式设置它的部署行为会改变",
            f"The default of {key} in {path} changed from {old} to {new}; deployments that do not set it behave differently",
            f"如果依赖旧行为，请显式设置 {key}={old}",
            f"If you rely on the old behaviour, set {key}={old} explicitly",
        )
    elif title.default_change and c.ctype not in (ChangeType.DOCS, ChangeType.TESTS) and stats.source:
        add(
            41,
            "默认行为发生变化，依赖默认值的部署会受影响",
            "A default behaviour changes; deployments relying on defaults are affected",
            "核对相关配置项，必要时显式设置为旧值",
            "Review the related settings and pin the old value explicitly if needed",
        )
    if title.crash and stats.source_lines:
        add(
            44,
            f"修复只覆盖报告的情形；走到 {names_zh} 的其他输入可能仍会崩溃",
            f"The fix covers the reported case; other inputs reaching {names_en} may still crash",
            "为相邻的输入形状补充回归测试",
            "Add regression tests for neighbouring input shapes",
        )
    body_text = first_paragraphs(c.commit.body, 800)
    if title.pathology and stats.source_lines:
        if _LIMIT_WORDS.search(body_text):
            add(
                45,
                f"{names_zh} 新增了上限：超过上限的输入会放弃或退回保守结果，而不是给出精确答案",
                f"{names_en} now has limits: inputs beyond them give up or fall back to a conservative result "
                "instead of an exact answer",
                "用你最大的真实输入确认结果没有退化",
                "Check your largest real inputs for degraded results",
            )
        elif re.search(r"\bhang|never (terminat|finish)", f"{title.subject} {body_text}", re.I):
            add(
                45,
                f"以前会卡住的输入现在能结束；如果 {names_zh} 的新剪枝条件有误，这些输入的结果可能不完整",
                f"Inputs that used to hang now finish; if the new cut-off in {names_en} is wrong, their results "
                "may be incomplete rather than slow",
                "用曾经卡住的真实输入确认结果完整",
                "Check that the inputs that used to hang now give complete results",
            )
        else:
            add(
                45,
                f"{names_zh} 的新算法必须给出与原来完全相同的结果；若有偏差，表现为输出不同而不是报错",
                f"The new algorithm in {names_en} must give the same results as before; a divergence shows up as "
                "different output, not as an error",
                "对比升级前后在真实输入上的输出",
                "Compare outputs before and after on real inputs",
            )
    parser = _paths_with(c, _PARSER_TOKENS)
    if parser and c.ctype in (ChangeType.BUGFIX, ChangeType.FEATURE, ChangeType.OTHER, ChangeType.PERFORMANCE):
        add(
            47,
            f"解析器有改动（{name_list(parser, True, 2)}）：以前能解析的代码可能被报告为语法错误，或反之",
            f"The parser changes ({name_list(parser, False, 2)}): code that parsed before may now be reported "
            "as a syntax error, or the reverse",
            "在有代表性的代码库上对比解析结果",
            "Compare parse results on a representative code base",
        )
    server = _paths_with(c, SERVER_TOKENS)
    if server and c.ctype not in (ChangeType.REFACTOR, ChangeType.TESTS, ChangeType.DOCS):
        add(
            48,
            f"语言服务器的响应会变化（{name_list(server, True, 2)}），编辑器插件可能看到不同的诊断或代码操作",
            f"Language server responses change ({name_list(server, False, 2)}); editor clients may see different "
            "diagnostics or code actions",
            "在常用编辑器里试一遍相关操作",
            "Try the affected actions in the editors your team uses",
        )
    output = _paths_with(c, _OUTPUT_TOKENS)
    behaviour = c.ctype in (ChangeType.BUGFIX, ChangeType.FEATURE, ChangeType.OTHER)
    schema = [p for p in output if "schema" in p.lower()]
    if schema and not server and behaviour:
        add(
            49,
            f"生成的 JSON Schema 会变化（{name_list(schema, True, 2)}），按旧 schema 校验或生成客户端的使用方会看到差异",
            f"Generated JSON Schema changes ({name_list(schema, False, 2)}); clients validated against or "
            "generated from the old schema see differences",
            "对比升级前后导出的 schema",
            "Diff the exported schemas before and after upgrading",
        )
    elif output and not server and behaviour:
        add(
            49,
            f"序列化结果可能变化（{name_list(output, True, 2)}），存储或比较序列化输出的使用方会看到差异",
            f"Serialized output may change ({name_list(output, False, 2)}); stored or compared dumps will differ",
            "对比关键类型升级前后的序列化输出",
            "Compare serialized output of your key types before and after",
        )
    if behaviour and stats.source_lines and _RECURSION_WORDS.search(f"{title.subject} {body_text}"):
        add(
            50,
            f"{names_zh} 对递归或循环的处理变了：深层嵌套或自引用的输入可能得到不同的结果",
            f"Recursion handling in {names_en} changes: deeply nested or self-referential inputs may resolve "
            "differently",
            "用你代码里最深的递归结构验证一遍",
            "Check the most deeply recursive structures in your code",
        )
    if behaviour and stats.source_lines and _MESSAGE_WORDS.search(title.subject):
        add(
            51,
            "诊断或错误信息的文本会变化，匹配这些文本或快照的工具需要更新",
            "Diagnostic or error message text changes; tooling that matches on messages or snapshots needs updating",
            "更新依赖消息文本的脚本和快照",
            "Update scripts and snapshots that match on message text",
        )
    if (
        behaviour
        and stats.source_lines
        and re.search(r"\bfalse (positive|negative)s?\b", f"{title.subject} {body_text}", re.I)
    ):
        add(
            52,
            "报告的问题会变化：误报消失后，为它们写的抑制注释会变成多余，修复也可能掩盖真实问题",
            "What gets reported changes: false positives go away, suppressions written for them become unused, "
            "and the fix may also hide true reports",
            "升级后清理多余的抑制注释，并留意漏报",
            "Clean up unused suppressions after upgrading and watch for missed reports",
        )
    if stats.source_lines and _MEMORY_WORDS.search(f"{title.subject}"):
        add(
            53,
            f"{names_zh} 的内存管理有变化：对象的生命周期或回收时机可能不同",
            f"Memory management in {names_en} changes: object lifetimes or collection timing may differ",
            "在长时间运行的进程里观察内存",
            "Watch memory in a long-running process",
        )
    if _CONCURRENCY.search(title.subject) and stats.source_lines:
        add(
            54,
            f"涉及并发（{names_zh}）：回归可能只在负载下出现",
            f"Concurrency is involved ({names_en}): a regression may only show under load",
            "在并发负载下跑测试",
            "Run the tests under concurrent load",
        )
    if c.ctype is ChangeType.FEATURE and _CHECK_WORDS.search(title.subject) and stats.source_lines:
        add(
            55,
            "新的检查可能在以前通过的代码上报告问题，启用它的项目会看到新的诊断",
            "The new check may report on code that passed before; projects that enable it see new diagnostics",
            "先在你的代码上试运行，再决定是否启用",
            "Dry-run it on your code before enabling it",
        )
    if c.diff.gpu_kernels and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS):
        kernels = list(c.diff.gpu_kernels)
        add(
            56,
            f"GPU 内核改动（{name_list(kernels, True, 2)}）可能只在部分硬件上改变数值或性能",
            f"GPU kernels change ({name_list(kernels, False, 2)}); numerics or speed may move on some hardware only",
            "在目标 GPU 上对比精度和吞吐",
            "Compare accuracy and throughput on your target GPUs",
        )
    return out


def insights(c: Context) -> list[Insight]:
    gpu = c.diff.gpu_kernels
    if not gpu:
        return []
    return [
        Insight(
            "performance",
            20,
            f"改动了 {len(gpu)} 个 GPU 内核文件（{name_list(gpu, True, 2)}），可能影响吞吐、延迟和显存",
            f"Changes {count_en(len(gpu), 'GPU kernel file')} ({name_list(gpu, False, 2)}), "
            "which can move throughput, latency and memory",
        )
    ]
