"""Words for the full-text index and for the query, the same way on both sides.

The index's tokenizer (SQLite FTS5 `porter unicode61`) splits on anything that is not a letter or
a digit, so `vllm/core/scheduler.py` and `parse_requirements` already give their parts; what it
cannot do is split camelCase (`FlashAttentionBackend`) or segment Chinese (a run of Chinese is
one token to it). So the text is prepared here: identifiers get their camelCase parts added, and
every Chinese run becomes its overlapping two-character pairs in a column of its own. A question
gets the same treatment, minus its question words, plus the English words of the Chinese
technical terms it uses (commit titles and paths are English even in a Chinese team).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_IDENT = re.compile(r"[A-Za-z0-9_]+(?:[.\-][A-Za-z0-9_]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_WORD = re.compile(r"[A-Za-z0-9]+")

# Definitions on changed lines and in hunk headers: the symbols a commit touches.
_DEFINITION = re.compile(
    r"\b(?:def|class|fn|struct|enum|trait|impl|function|func|interface|type|mod|macro_rules!|const|static)\s+"
    r"(?:<[^>]*>\s*)?([A-Za-z_][A-Za-z0-9_]*)"
)
_HUNK = re.compile(r"^@@[^@]*@@\s*(.*)$")
MAX_SYMBOLS = 200

# Path parts every repository has: they say nothing about where a commit works.
GENERIC_PARTS = frozenset("src lib mod main index init crates packages pkg internal rs py".split())

# Words that say what kind of question it is, not what it is about.
STOP_EN = frozenset(
    """
a an the and or but of to in on at by for with from into onto over about as is are was were be been being do
does did done have has had having what which who whom whose when where why how that this these those there
here it its they them their we our us you your i me my any some all anything something everything much many
more most other such than then so very can could would should will shall may might must need needs not no
happen happened happening changed change changes changing update updated updates modify modified new
commit commits pr prs repo repository code land landed merged merge go went get got make made also just
tell show list give summarize summarise summary explain anyone please recently recent lately week weeks
day days month months since today yesterday last past previous this
""".split()
)
# Chinese question words and the generic "change" vocabulary, removed before pairing.
STOP_ZH = (
    "有什么",
    "有哪些",
    "有没有",
    "什么",
    "哪些",
    "哪个",
    "怎么样",
    "怎么",
    "如何",
    "为什么",
    "是否",
    "改动",
    "变化",
    "变更",
    "修改",
    "更新",
    "提交",
    "相关",
    "关于",
    "一下",
    "情况",
    "内容",
    "方面",
    "最近",
    "这周",
    "本周",
    "上周",
    "今天",
    "昨天",
    "我们",
    "你们",
    "他们",
    "请问",
    "谁",
    "了",
    "的",
    "吗",
    "呢",
    "吧",
    "在",
    "上",
    "中",
    "里",
    "和",
    "与",
    "及",
    "对",
    "把",
    "被",
    "是",
    "有",
    "做",
    "过",
    "都",
)

# Chinese technical words → the English words commits use for them.
GLOSSARY = {
    "调度器": "scheduler",
    "调度": "scheduler scheduling",
    "解析器": "resolver parser",
    "解析": "resolve resolver parse",
    "依赖解析": "resolver resolution",
    "缓存": "cache",
    "锁文件": "lockfile lock",
    "锁": "lock",
    "安装": "install installer",
    "卸载": "uninstall",
    "构建": "build",
    "编译": "compile build",
    "发布": "release publish",
    "文档": "docs documentation",
    "测试": "test tests",
    "性能": "performance perf",
    "加速": "faster speed performance",
    "内存": "memory",
    "显存": "memory",
    "依赖": "dependency dependencies deps",
    "升级": "upgrade bump",
    "版本": "version",
    "修复": "fix",
    "缺陷": "bug",
    "错误": "error bug",
    "报错": "error",
    "崩溃": "crash panic",
    "异常": "exception error",
    "安全": "security",
    "漏洞": "vulnerability security",
    "认证": "auth authentication",
    "鉴权": "auth",
    "凭据": "credentials",
    "密钥": "key secret",
    "代理": "proxy",
    "网络": "network",
    "下载": "download",
    "上传": "upload",
    "索引": "index",
    "虚拟环境": "venv virtualenv",
    "环境变量": "environment variable env",
    "环境": "environment env",
    "工作区": "workspace",
    "配置": "config configuration settings",
    "设置": "settings",
    "日志": "log logging",
    "命令行": "cli command",
    "命令": "command",
    "参数": "argument option flag",
    "选项": "option flag",
    "平台": "platform",
    "注册表": "registry",
    "镜像": "mirror image",
    "签名": "signature sign",
    "哈希": "hash",
    "校验": "checksum verify validation",
    "弃用": "deprecate deprecated deprecation",
    "移除": "remove removal",
    "删除": "remove delete",
    "重构": "refactor",
    "并发": "concurrency concurrent parallel",
    "并行": "parallel",
    "超时": "timeout",
    "重试": "retry",
    "格式化": "format formatter",
    "类型": "type typing",
    "插件": "plugin",
    "警告": "warning warn",
    "输出": "output",
    "补全": "completion",
    "权限": "permission",
    "量化": "quantization quant",
    "注意力": "attention",
    "内核": "kernel",
    "模型": "model",
    "分布式": "distributed",
    "推理": "inference",
    "采样": "sampling sampler",
    "算子": "op kernel",
    "流水线": "pipeline",
    "张量": "tensor",
    "持续集成": "ci",
    "工作流": "workflow",
    "容器": "docker container",
    "脚本": "script",
    "示例": "example",
    "兼容": "compatibility compat",
    "迁移": "migrate migration",
    "回滚": "revert",
    "还原": "revert",
    "线程": "thread",
    "进程": "process",
    "异步": "async",
    "数据库": "database",
    "查询": "query",
    "模板": "template",
    "界面": "ui interface",
    "接口": "api interface",
    "请求": "request",
    "响应": "response",
    "连接": "connection",
    "证书": "certificate tls",
    "加密": "encryption",
    "压缩": "compression",
    "解压": "extract",
    "路径": "path",
    "文件": "file",
    "目录": "directory",
    "符号链接": "symlink",
    "链接": "link",
    "默认": "default",
    "可选": "optional",
    "预览": "preview",
    "实验": "experimental",
    "稳定": "stable",
    "解释器": "interpreter",
    "元数据": "metadata",
    "源码": "source",
    "打包": "package packaging build",
    "包": "package",
    "工具": "tool",
    "脚手架": "init scaffold",
    "自动": "auto automatic",
}

# The glossary's longest keys first, so 虚拟环境 is read before 环境.
_GLOSSARY_KEYS = sorted(GLOSSARY, key=len, reverse=True)


@dataclass(frozen=True)
class Query:
    words: tuple[str, ...]  # lower-case English words and identifier parts
    phrases: tuple[tuple[str, ...], ...]  # multi-part identifiers asked for as they are written
    pairs: tuple[str, ...]  # Chinese two-character pairs

    @property
    def empty(self) -> bool:
        return not (self.words or self.phrases or self.pairs)

    def fts(self) -> str:
        """The FTS5 MATCH expression: any of the terms (BM25 ranks by how many and how rare)."""
        terms = [_quote(" ".join(p)) for p in self.phrases]
        terms += [_quote(w) for w in self.words]
        terms += [f"cjk : {_quote(p)}" for p in self.pairs]
        return " OR ".join(dict.fromkeys(terms))


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def camel_parts(word: str) -> list[str]:
    """`FlashAttentionBackend` → flash attention backend; `HTTPServer` → http server. Words that
    only look camel-cased stay whole: `ROCm`, `MoE`, `vLLM`, `FP8`, `e4m3` (a part of one or two
    letters is an acronym's tail, not a word)."""
    parts = _CAMEL.findall(word)
    if len(parts) < 2 or any(len(re.sub(r"\d", "", p)) < 3 for p in parts):
        return [word.lower()]
    return [p.lower() for p in parts]


def expand(text: str) -> str:
    """Text for the index: as written, plus the camelCase parts of its identifiers."""
    extra: list[str] = []
    for ident in _IDENT.findall(text or ""):
        for word in _WORD.findall(ident):
            parts = camel_parts(word)
            if len(parts) > 1:
                extra.extend(parts)
    return (text or "") + ("\n" + " ".join(extra) if extra else "")


def path_parts(paths: Iterable[str]) -> str:
    """The words of the touched paths' directories, crates, packages and file stems, each once:
    `crates/uv-resolver/src/lib.rs` → uv resolver. A word there says where a commit works, which
    a word in its message does not ("resolving" in a trampoline upgrade); once each, so a commit
    touching fifty files of one crate is not taken for fifty mentions of it."""
    found: dict[str, None] = {}
    for path in paths:
        *dirs, name = (path or "").split("/")
        stem = name.split(".", 1)[0] if not name.startswith(".") else name
        for part in (*dirs, stem):
            for word in _WORD.findall(part):
                for w in camel_parts(word):
                    if w not in GENERIC_PARTS and len(w) > 1:
                        found.setdefault(w, None)
    return " ".join(found)


def cjk_pairs(text: str) -> list[str]:
    """Every overlapping two-character pair of every Chinese run (a single character is skipped)."""
    pairs: list[str] = []
    for run in _CJK_RUN.findall(text or ""):
        pairs.extend(run[i : i + 2] for i in range(len(run) - 1))
    return pairs


def symbols(patches: list[str | None]) -> list[str]:
    """Names defined or touched by the changed lines and hunk headers (at most MAX_SYMBOLS)."""
    found: dict[str, None] = {}
    for patch in patches:
        for line in (patch or "").splitlines():
            if line.startswith(("+++", "---")):
                continue
            if line.startswith("@@"):
                header = _HUNK.match(line)
                line = header.group(1) if header else ""
            elif not line.startswith(("+", "-")):
                continue
            for name in _DEFINITION.findall(line):
                found.setdefault(name, None)
            if len(found) >= MAX_SYMBOLS:
                return list(found)
    return list(found)


def build_query(question: str) -> Query:
    """The question's search terms: identifiers (whole and in parts), English words minus the
    question words, glossary words for Chinese terms, and pairs of the Chinese left over."""
    words: dict[str, None] = {}
    phrases: dict[tuple[str, ...], None] = {}
    latin = _CJK_RUN.sub(" ", question or "")
    for ident in _IDENT.findall(latin):
        parts = [p for word in _WORD.findall(ident) for p in (camel_parts(word) or [word.lower()])]
        whole = [w.lower() for w in _WORD.findall(ident)]
        if len(parts) > 1 and not all(p in STOP_EN for p in parts):
            phrases.setdefault(tuple(parts), None)
        for w in dict.fromkeys(whole + parts):
            if w not in STOP_EN and (len(w) > 1 or w.isdigit()):
                words.setdefault(w, None)
    chinese = " ".join(_CJK_RUN.findall(question or ""))
    found: list[str] = []
    for key in _GLOSSARY_KEYS:  # before the stop words, which would break 上传 or 中文
        if key in chinese:
            for w in GLOSSARY[key].split():
                words.setdefault(w, None)
            found.append(key)
            chinese = chinese.replace(key, " ")
    for stop in STOP_ZH:
        chinese = chinese.replace(stop, " ")
    pairs = tuple(dict.fromkeys(cjk_pairs(" ".join(found)) + cjk_pairs(chinese)))
    return Query(tuple(words), tuple(phrases), pairs)
