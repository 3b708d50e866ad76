"""Diff scanners: what the unified patches show, line by line, without judging it.

The evidence modules decide what a removed definition, a changed default or a bumped requirement
means; this module only finds them. Every scanner takes patches as git prints them (GitHub's
`patch` field has the same shape) and tolerates missing or truncated ones.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

from ...core.models import FileChange
from .docstrings import docstring_starts
from .paths import extension

if TYPE_CHECKING:
    from ..repo_config import RepoProfile
    from .stats import FileStats


_PY_DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async\s+)?(?:def|class)\s+(?P<name>[A-Za-z]\w*)\s*[(:]")
_JS_EXPORT = re.compile(
    r"^\s*export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?"
    r"(?:function\*?|class|const|let|var|interface|type|enum)\s+(?P<name>[A-Za-z$][\w$]*)"
)
_GO_DEF = re.compile(r"^(?:func\s+(?:\([^)]*\)\s*)?|type\s+)(?P<name>[A-Z]\w*)\b")
# Top-level items only: `pub fn new` inside an `impl` is a method, and `pub(crate)` is not public.
_RUST_DEF = re.compile(
    r"^pub\s+(?:async\s+)?(?:unsafe\s+)?(?:fn|struct|enum|trait|type|mod|const|static)"
    r"\s+(?P<name>[A-Za-z_]\w*)"
)
_JAVA_DEF = re.compile(
    r"^\s*public\s+(?:static\s+|final\s+|abstract\s+|sealed\s+)*"
    r"(?:(?:class|interface|enum|record)\s+(?P<type>\w+)|[\w<>\[\], ?]+\s+(?P<method>\w+)\s*\()"
)
_ASSIGNMENT = re.compile(
    r"""^(?P<indent>\s*)["']?(?P<key>[A-Za-z_][\w.-]*)["']?\s*"""
    r"""(?::\s*[\w\[\], .|"']+?\s*=|=|:)\s*(?P<val>[^#]*?)\s*,?\s*(?:#.*)?$"""
)
_ENV_DEFAULT = re.compile(r"""(?:getenv|environ\.get)\(\s*["'](?P<key>\w+)["']\s*,\s*(?P<val>[^)]+?)\s*\)""")
# A setting read with its default: `self._config.get("installer.re-resolve", True)`.
_GETTER_DEFAULT = re.compile(
    r"""\b\w*(?:config|settings|options|conf|cfg|env)\w*\.get\(\s*["'](?P<key>[\w.-]+)["']\s*,\s*(?P<val>[^(),]+?)\s*\)""",
    re.I,
)
_LITERAL = re.compile(r"""^(-?\d[\d_.]*(e-?\d+)?|true|false|none|null|nil|"[^"]*"|'[^']*'|[\w.-]+)$""", re.I)
_REQUIREMENT = re.compile(
    r"^(?P<name>[@A-Za-z0-9][\w.@/-]*)(?:\[[^\]]*\])?\s*"
    r"(?:[:=]\s*(?:\{\s*version\s*=\s*)?)?\s*(?:==|>=|~=|<=|<|>|!=|\^|~|=)?\s*"
    r"v?(?P<ver>\d+(?:\.\d+)*)"
)
_NOT_PACKAGES = frozenset(
    {
        "python",
        "requires-python",
        "version",
        "name",
        "go",
        "toolchain",
        "edition",
        "rust-version",
        "node",
        "npm",
        "engines",
        "python_requires",
    }
)
_SECTION = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*$")
_ARRAY_KEY = re.compile(r"""^\s*["']?([\w.-]+)["']?\s*[=:]\s*[\[{]\s*$""")

MAX_PATCH_LINE = 400  # longer lines (minified code, data) say nothing these rules read


@lru_cache(maxsize=64)
def _split(patch: str) -> tuple[tuple[str, str], ...]:
    """A patch split into (sign, text) lines once: every scanner of one commit reads the same
    patch, and a str caches its hash, so the second reader finds it for the cost of a lookup."""
    out: list[tuple[str, str]] = []
    for line in patch.splitlines():
        if len(line) > MAX_PATCH_LINE:
            out.append((" ", ""))  # keeps block boundaries without feeding the regexes a huge line
        elif line.startswith("@@"):
            out.append(("@", line))
        elif line[:1] in ("+", "-", " ") and not line.startswith(("+++ ", "--- ")):
            out.append((line[0], line[1:]))
    return tuple(out)


def diff_lines(patch: str | None) -> Iterator[tuple[str, str]]:
    """(sign, text) for every line of a unified diff; sign '@' marks a hunk boundary."""
    return iter(_split(patch)) if patch else iter(())


def change_blocks(patch: str | None) -> Iterator[tuple[list[str], list[str]]]:
    """Each run of removed lines with the added lines that replace it."""
    minus: list[str] = []
    plus: list[str] = []
    for sign, text in diff_lines(patch):
        if sign == "-":
            if plus:
                yield minus, plus
                minus, plus = [], []
            minus.append(text)
        elif sign == "+":
            plus.append(text)
        else:
            if minus or plus:
                yield minus, plus
            minus, plus = [], []
    if minus or plus:
        yield minus, plus


def public_name(line: str, ext: str) -> str | None:
    if ext in ("py", "pyi", "pyx"):
        m = _PY_DEF.match(line)
        # Module level only: method names (get_name, forward) repeat across classes, so a method
        # "removed" here is usually defined again elsewhere and would be noise.
        return m.group("name") if m and not m.group("indent") else None
    if ext in ("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"):
        m = _JS_EXPORT.match(line)
    elif ext == "go":
        m = _GO_DEF.match(line)
    elif ext == "rs":
        m = _RUST_DEF.match(line)
    elif ext in ("java", "kt", "cs", "scala"):
        m = _JAVA_DEF.match(line)
        return (m.group("type") or m.group("method")) if m else None
    else:
        return None
    return m.group("name") if m else None


# Prose is not a default: a changed "description" or "help" text changes no behaviour.
_PROSE_KEYS = re.compile(
    r"(^|[._-])(description|desc|help|doc|docs|docstring|title|summary|message|msg|comment"
    r"|example|examples|label|text|markdownDescription|deprecationMessage)$",
    re.I,
)


def _is_literal_value(val: str) -> bool:
    """A value that configures something: a number, a boolean, null, or a short word — not prose."""
    v = val.strip().strip(",")
    if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
        v = v[1:-1]
        return len(v) <= 40 and " " not in v.strip()
    return bool(_LITERAL.match(v))


def getter_defaults(lines: list[str]) -> dict[str, str]:
    """Settings read with a literal default (`config.get("a.b", True)`): key → default."""
    found: dict[str, str] = {}
    for line in lines:
        if ".get(" in line:
            for m in _GETTER_DEFAULT.finditer(line):
                if _is_literal_value(m.group("val")):
                    found.setdefault(m.group("key"), m.group("val").strip())
    return found


# A declared field whose value is built by a call: `max_len: int = field(`, `name = Field(`,
# `x = attr.ib(`, `y: int = dataclasses.field(default=3)`.
_FIELD_OPEN = re.compile(
    r"^(?P<indent>\s*)(?P<name>[A-Za-z_]\w*)\s*(?::[^=]+)?=\s*(?:[\w.]+\.)?(?:field|Field|ib|attrib)\s*\("
)
_DEFAULT_KEYWORD = re.compile(r"\bdefault\s*=\s*(?P<val>[^,()]+?)\s*(?:[,)]|$)")
_STATEMENT = re.compile(r"^(?P<indent>\s*)(?:[A-Za-z_]\w*\s*(?::[^=]+)?=[^=]|(?:async\s+)?def\s|class\s|@)")


def field_defaults(patch: str | None) -> dict[str, tuple[str, str]]:
    """Fields whose declared default changes, named by the field, not by the keyword: `max_len:
    int = field(` … `-    default=256,` `+    default=512,` gives max_len → (256, 512), as
    does the same on one line. Only literal values (a number, a boolean, a short word)."""
    old: dict[str, str] = {}
    new: dict[str, str] = {}
    owner, depth = "", 0
    for sign, text in diff_lines(patch):
        if sign == "@":
            owner = ""
            continue
        opened = _FIELD_OPEN.match(text)
        statement = _STATEMENT.match(text)
        if opened:
            owner, depth = opened.group("name"), len(opened.group("indent").expandtabs(4))
        elif statement and len(statement.group("indent").expandtabs(4)) <= depth:
            owner = ""  # the next statement at the field's depth: its call is over
        m = _DEFAULT_KEYWORD.search(text) if owner and sign in "+-" else None
        if m and _is_literal_value(m.group("val")):
            (old if sign == "-" else new).setdefault(owner, m.group("val").strip())
    return {k: (old[k], new[k]) for k in old.keys() & new.keys() if old[k].strip("\"'") != new[k].strip("\"'")}


def paired_assignments(minus: list[str], plus: list[str]) -> dict[str, tuple[str, str]]:
    """Lines replaced one for one where only a literal value changes, at any depth: a nested
    setting (`"re-resolve": True,` → `False,` inside a defaults table). key → (old, new)."""
    found: dict[str, tuple[str, str]] = {}
    if len(minus) != len(plus):
        return found
    for a, b in zip(minus, plus):
        ma, mb = _ASSIGNMENT.match(a), _ASSIGNMENT.match(b)
        if not ma or not mb or ma.group("key") != mb.group("key") or ma.group("indent") != mb.group("indent"):
            continue
        old, new = ma.group("val").strip().rstrip(","), mb.group("val").strip().rstrip(",")
        if old != new and not _PROSE_KEYS.search(ma.group("key")) and _is_literal_value(old) and _is_literal_value(new):
            found[ma.group("key")] = (old, new)
    return found


def assignments(lines: list[str], in_config_file: bool) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        for env in _ENV_DEFAULT.finditer(line):
            found[env.group("key")] = env.group("val").strip()
        m = _ASSIGNMENT.match(line)
        if not m or len(m.group("indent").expandtabs(4)) > (8 if in_config_file else 4):
            continue
        val = m.group("val").strip().rstrip(",")
        if _PROSE_KEYS.search(m.group("key")):
            continue
        if val and _LITERAL.match(val) and _is_literal_value(val) and not val.endswith(("(", "[", "{", "\\")):
            found.setdefault(m.group("key"), val)
    return found


# A requirement without a version ("tilelang; sys_platform == 'linux'"), in a requirements file.
_BARE_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?\s*(?:;.*)?$")
# A requirement pinned to one version: "tilelang==0.1.11", "numpy === 2.0".
_EXACT_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?\s*===?\s*v?(?P<ver>\d[\w.+-]*)\s*(?:;.*)?$")


def _requirement_text(line: str) -> str:
    text = re.sub(r"""["',()]""", " ", line).strip()  # poetry writes "name (==1.2)"
    return re.sub(r"^(require|dependency|implementation|api)\s+", "", text)


def requirements(lines: Iterable[str], bare: bool = False) -> dict[str, str]:
    """name → version of each requirement the lines declare; with `bare` (a requirements file),
    requirements without a version too (version '')."""
    found: dict[str, str] = {}
    for line in lines:
        text = _requirement_text(line)
        m = _REQUIREMENT.match(text)
        if m and m.group("name").lower() not in _NOT_PACKAGES:
            found.setdefault(m.group("name").lower(), m.group("ver"))
        elif bare and (b := _BARE_REQUIREMENT.match(text)) and b.group("name").lower() not in _NOT_PACKAGES:
            found.setdefault(b.group("name").lower(), "")
    return found


def exact_pins(lines: Iterable[str]) -> dict[str, str]:
    """name → version of each requirement pinned to exactly one version (`name==1.2.3`)."""
    found: dict[str, str] = {}
    for line in lines:
        m = _EXACT_PIN.match(_requirement_text(line))
        if m and m.group("name").lower() not in _NOT_PACKAGES:
            found.setdefault(m.group("name").lower(), m.group("ver"))
    return found


def manifest_blocks(patch: str | None) -> Iterator[tuple[str, list[str], list[str]]]:
    """(group, removed lines, added lines) per change block of a manifest: the group is the last
    `[section]` or `key = [` seen (hunk header, context or changed lines), '' when unknown; a
    `[section]` line added or removed ends the block before it."""
    group = ""
    minus: list[str] = []
    plus: list[str] = []
    for sign, text in diff_lines(patch):
        if sign == "@":
            if minus or plus:
                yield group, minus, plus
                minus, plus = [], []
            header = text.split("@@")[-1].strip() if text.count("@@") >= 2 else ""
            m = _SECTION.match(header) or _ARRAY_KEY.match(header)
            group = m.group(1) if m else ""
            continue
        m = _SECTION.match(text) or _ARRAY_KEY.match(text)
        if sign in "+-" and m and (minus or plus) and _SECTION.match(text):
            yield group, minus, plus  # a section added or removed starts a block of its own
            minus, plus = [], []
        if sign in "+-":
            (minus if sign == "-" else plus).append(text)
        elif minus or plus:
            yield group, minus, plus
            minus, plus = [], []
        if m:
            group = m.group(1)
    if minus or plus:
        yield group, minus, plus


_LOCK_NAME = re.compile(r"""^\s*(?:name\s*=\s*"(?P<a>[^"]+)"|"(?:node_modules/)?(?P<b>[@\w./-]+)":\s*\{)""")
_LOCK_VERSION = re.compile(r"""^\s*"?version"?\s*[=:]\s*"(?P<v>[^"]+)"\s*,?$""")


def lockfile_updates(f: FileChange) -> list[tuple[str, str, str]]:
    """(name, old, new) for each package whose version line changed in a lockfile hunk."""
    found: list[tuple[str, str, str]] = []
    name = ""
    old = ""
    for sign, text in diff_lines(f.patch):
        if sign == "@":
            name, old = "", ""
            continue
        m = _LOCK_NAME.match(text)
        if m and sign != "-":
            name, old = (m.group("a") or m.group("b")), ""
            continue
        v = _LOCK_VERSION.match(text)
        if v and name:
            if sign == "-":
                old = v.group("v")
            elif sign == "+" and old and old != v.group("v"):
                found.append((name, old, v.group("v")))
                old = ""
    return found


# --- checks that refuse input ---------------------------------------------------------------------

# Extensions whose comments start with '#' (the others: '//' and '/* … */').
_HASH_COMMENTS = frozenset("py pyi pyx pxd rb sh bash zsh fish pl pm r jl ex exs nim cr tcl ps1 mojo".split())
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_RUST_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# A statement that refuses: raises or throws a named error, returns an error or False.
_REFUSAL = re.compile(
    r"^(?:raise\s+[A-Za-z_]|throw\s+(?:new\s+)?[A-Za-z_$]"
    r"|return\s+(?:Err\b|false\b|False\b|(?:nil,\s*)?(?:fmt\.Errorf|errors\.New)\b)|(?:bail|panic)!\s*\()"
)
# A condition and its refusal on one line: 'if x: raise …', 'if (x) throw …', 'if x { return Err(…) }',
# Ruby's 'raise … unless x', Rust's 'ensure!(x, …)'.
_INLINE_REFUSAL = re.compile(
    r"^(?:\}\s*)?(?:else\s+)?(?:if|elif|unless|guard)\b.*?(?:[:{)]|\belse)\s*\{?\s*"
    r"(?:raise\s+[A-Za-z_]|throw\s+|return\s+(?:Err\b|false\b|False\b)|(?:bail|panic)!)"
    r"|^raise\s+[A-Za-z_].*\s(?:if|unless)\s|^ensure!\s*\("
)
_CONDITION = re.compile(r"^(?:\}\s*)?(?:(?:el)?if|else|unless|guard|case|when)\b")
_CLOSER = re.compile(r"^[)\]}]")


def code_of(text: str, ext: str) -> str:
    """A line's code: string literals emptied, comments dropped (what a line says is not what it does)."""
    stripped = text.strip()
    if stripped.startswith(("//", "/*", "*", "#" if ext in _HASH_COMMENTS else "//")):
        return ""
    code = (_RUST_STRING if ext == "rs" else _STRING).sub('""', stripped)
    cut = code.find("#") if ext in _HASH_COMMENTS else code.find("//")
    return (code[:cut] if cut >= 0 else code).strip()


# A line that only logs or prints: what it says is not what the code does.
_LOG_CALL = re.compile(
    r"^(?:(?:self|cls|this)\.)?_?(?:logger|logging|log|LOG|console|warnings|tracing|log::\w+|tracing::\w+)\s*[.:!(]"
    r"|^(?:print|printf|fprintf|puts|eprint|eprintln!|println!|print!|debug!|info!|warn!|error!|trace!|fmt\.Print\w*"
    r"|System\.out\.\w+)\s*\("
)
# Outside its strings Python has no backticks, no backslash but at a line's end and no sentence
# ("value. A"): such a line is the text of a docstring whose quotes lie outside the hunk ("`0.0` pins \\( \\alpha \\)").
_DOC_TEXT = re.compile(r"`|\\(?!\s*$)|[A-Za-z]\. [A-Z]")
_EMPTIED = re.compile(r"""[rbfuRBFU]{0,2}(?:""|'')""")


def code_changes(f: FileChange) -> int:
    """How many lines of code a patch changes: added and removed lines that are code — not blank,
    comments or docstrings, not only string literals (a reworded message), not a logging or print
    call — less the lines that only move (the same code removed and added, a reindented block).
    What a careful reader counts before calling a commit a change to what runs."""
    return _code_changes(f.patch, extension(f.path)) if f.patch else 0


def changes_shipped_code(stats: FileStats, profile: RepoProfile, at_least: int = 1) -> bool:
    """Do the patches of shipped source (outside tests, docs, CI, examples, tooling and internal
    paths) change `at_least` lines of code (code_changes)? Never without patches. Stops as soon as
    they do."""
    seen = 0
    for f in stats.source:
        if not profile.is_internal(f.path):
            seen += code_changes(f)
            if seen >= at_least:
                return True
    return False


@lru_cache(maxsize=64)
def _code_changes(patch: str, ext: str) -> int:
    python = ext in ("py", "pyi", "pyx")
    plus: Counter[str] = Counter()
    minus: Counter[str] = Counter()
    in_doc = {"+": False, "-": False}  # inside a docstring, on each side of the diff
    inside = docstring_starts(patch) if python and ('"""' in patch or "'''" in patch) else frozenset()
    hunk = 0
    for sign, text in diff_lines(patch):
        if sign == "@":
            hunk += 1
            in_doc = dict.fromkeys(in_doc, hunk in inside)
            continue
        sides = ("+", "-") if sign == " " else (sign,)
        quotes = (text.count('"""') + text.count("'''")) if python else 0
        docstring = quotes > 0 or any(in_doc[s] for s in sides)
        if quotes % 2:
            for s in sides:
                in_doc[s] = not in_doc[s]
        if sign == " " or docstring:
            continue
        code = _EMPTIED.sub("", code_of(text, ext))
        if not re.search(r"\w", code) or _LOG_CALL.match(code) or (python and _DOC_TEXT.search(code)):
            continue
        (plus if sign == "+" else minus)[" ".join(code.split())] += 1
    return sum((plus - minus).values()) + sum((minus - plus).values())


def _views(patch: str | None, ext: str) -> Iterator[list[tuple[str, int, str, str]]]:
    """Per hunk, the new file's lines as (sign, indent, code, text): context and added lines, with
    the inside of triple-quoted strings (docstrings) blanked in `code`."""
    view: list[tuple[str, int, str, str]] = []
    in_doc = False
    python = ext in ("py", "pyi", "pyx")
    inside = docstring_starts(patch) if patch and python and ('"""' in patch or "'''" in patch) else frozenset()
    hunk = 0
    for sign, text in diff_lines(patch):
        if sign == "@":
            if view:
                yield view
            hunk += 1
            view, in_doc = [], hunk in inside
            continue
        if sign == "-":
            continue
        quotes = text.count('"""') + text.count("'''") if ext in ("py", "pyi", "pyx") else 0
        code = "" if in_doc or quotes else code_of(text, ext)
        in_doc ^= quotes % 2 == 1
        view.append((sign, len(text) - len(text.lstrip()), code, text))
    if view:
        yield view


def _governor(view: list[tuple[str, int, str, str]], at: int) -> tuple[str, int, str, str] | None:
    """The line a statement is nested under (the nearest code line above it, indented less); a
    closing ')' or '}' of a wrapped condition leads on to the line that opened it."""
    indent = view[at][1]
    for line in reversed(view[:at]):
        _, ind, code, _ = line
        if not code or ind >= indent:
            continue
        if _CLOSER.match(code) and not _CONDITION.match(code):
            indent = ind + 1  # the opening line is at this indentation
            continue
        return line
    return None


def _refusal_head(code: str) -> str:
    """What a refusal raises or returns, to tell a moved or reflowed one from a new one."""
    return re.sub(r"[\s(].*$", "", re.sub(r"^(raise|throw|return)\s+(new\s+)?", r"\1 ", code))


# Words without which a patch holds no refusal (checked on the whole patch, before any line is read).
_REFUSAL_WORDS = (
    "raise ", "throw ", "return Err", "return false", "return False", "Errorf", "errors.New", "bail!", "panic!",
    "ensure!",
)  # fmt: skip


def new_refusal_checks(f: FileChange) -> list[tuple[str, str]]:
    """(code, text) of each check this patch adds that refuses input: a raise, throw, error return
    or `return False` under a condition, where the statement or its condition is new (an existing
    raise under a tightened `if` counts). `code` has its strings emptied and comments dropped;
    `text` is the condition and the statement as written (what the check is about). Comments,
    strings and docstrings are not code; a refusal removed from the same file (moved, reflowed,
    reworded) is not new."""
    if not f.patch or not any(word in f.patch for word in _REFUSAL_WORDS):
        return []
    ext = extension(f.path)
    removed_code = {code_of(t, ext) for s, t in diff_lines(f.patch) if s == "-"} - {""}
    removed_heads = Counter(_refusal_head(c) for c in removed_code if _REFUSAL.match(c))
    found: list[tuple[str, str]] = []
    for view in _views(f.patch, ext):
        for at, (sign, _, code, text) in enumerate(view):
            if not code:
                continue
            if _INLINE_REFUSAL.search(code):
                if sign == "+" and code not in removed_code:
                    found.append((code, text.strip()))
                continue
            if not _REFUSAL.match(code):
                continue
            governor = _governor(view, at)
            if governor is None or not _CONDITION.match(governor[2]):
                continue
            condition_is_new = governor[0] == "+" and governor[2] not in removed_code
            said = f"{governor[3].strip()} {text.strip()}"
            if sign == "+":
                head = _refusal_head(code)
                if removed_heads[head] and not condition_is_new:
                    removed_heads[head] -= 1  # moved or reworded, under the same condition
                    continue
                found.append((code, said))
            elif condition_is_new:
                found.append((f"{governor[2]} {code}", said))
    return found


def new_refusals(f: FileChange) -> list[str]:
    """The code of each check this patch adds that refuses input (new_refusal_checks)."""
    return [code for code, _ in new_refusal_checks(f)]


_WHAT_REFUSES = re.compile(
    r"raise\s+[\w.]+|throw\s+(?:new\s+)?[\w.$]+|return\s+(?:Err\b|false\b|False\b|(?:nil,\s*)?[\w.]+)"
    r"|(?:bail|panic|ensure)!"
)


def refusal_head(code: str) -> str:
    """'raise ValueError', 'return Err', 'throw new Error': what a refusal does, for a sentence."""
    m = _WHAT_REFUSES.search(code)
    return m.group(0) if m else ""


# --- evidence a word of the message asks for -----------------------------------------------------

_QUOTED_WORDS = re.compile(r"""["'`][^"'`\n]*?[A-Za-z]+ [A-Za-z]+[^"'`\n]*["'`]""")  # quoted text of two words or more
_MEMORY_CODE = (
    "weakref", "gc.", "__del__", "Drop for", "drop(", "Rc<", "Weak<", "free(", "malloc", "alloc", "refcount",
    "Py_DECREF", "Py_INCREF", "lifetime", "ManuallyDrop", "mem::", "shrink_to_fit", "__slots__",
)  # fmt: skip


def rewords_messages(f: FileChange) -> bool:
    """The patch takes out quoted text and puts other quoted text in (a message reworded), not
    only adds new messages: what "the diagnostic text changes" needs to be more than a word."""
    if not f.patch or "-" not in f.patch:
        return False
    gone = added = False
    for sign, text in diff_lines(f.patch):
        if sign in "+-" and _QUOTED_WORDS.search(text):
            gone, added = gone or sign == "-", added or sign == "+"
            if gone and added:
                return True
    return False


def manages_memory(f: FileChange) -> bool:
    """The patch touches code that manages memory (weak references, drops, frees, lifetimes)."""
    patch = f.patch or ""
    return any(word in patch for word in _MEMORY_CODE)


# Code that shares state between threads or tasks: locks, atomics, spawned tasks, pools, channels.
_CONCURRENT_CODE = re.compile(
    r"\b(threading|Thread\(|R?Lock\(|Semaphore|Condition\(|asyncio\.(?:gather|Lock|Queue|create_task|wait|Event|"
    r"TaskGroup|shield)|Mutex|RwLock|Arc<|Atomic[A-Z]\w*|tokio::spawn|thread::spawn|spawn_blocking|go func|"
    r"sync\.(?:Mutex|RWMutex|WaitGroup|Once)|chan\b|select!|Condvar|ThreadPool\w*|ProcessPool\w*|"
    r"concurrent\.futures|multiprocessing|rayon|par_iter|crossbeam)"
)


def shared_state_files(files: Iterable[FileChange]) -> list[str]:
    """The files among `files` whose changed lines take locks, spawn tasks, use pools or atomics —
    in files the commit did not create (new code is not a regression waiting in code that worked),
    and not the same lines moved from one file to another (a module split). Read only for the
    commits whose risks are shown (above low): a regular expression of alternatives over every
    patch of every commit would cost more than all the other rules."""
    lines: list[tuple[str, str, str]] = []
    for f in files:
        if f.status == "added" or not f.patch:
            continue
        for sign, text in diff_lines(f.patch):
            if sign in "+-" and _CONCURRENT_CODE.search(text):
                lines.append((f.path, sign, text.strip()))
    plus = {line for _, sign, line in lines if sign == "+"}
    minus = {line for _, sign, line in lines if sign == "-"}
    found: list[str] = []
    for path, sign, line in lines:
        if line not in (minus if sign == "+" else plus) and path not in found:
            found.append(path)
    return found
