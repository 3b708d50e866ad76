"""One pass over a commit's patches, for what the summary names and the removal rules read:
public definitions added, removed and re-exported, command-line flags before and after (each call
read whole, however it is split across lines), what each source file adds, removes and changes by
name, the tests and the documentation sections added, environment variables read. Every patch is split once (patch.diff_lines) and read line by line once; a regular
expression runs only on lines whose start makes it worth running."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...core.models import FileChange
from .patch import code_of, diff_lines, public_name
from .paths import FileKind, extension
from .stats import FileDelta

if TYPE_CHECKING:
    from ..repo_config import RepoProfile
    from .stats import FileStats

_FLAG_CALL = re.compile(r"add_argument|\.option\(|Option\(|\baddoption\(|\badd_option\(|\bflag\.|\.flag\(|\barg\(")
_HIDDEN_FLAG = re.compile(r"argparse\.SUPPRESS|\bSUPPRESS\b|\bhide\s*=\s*true\b|\bhidden\s*=\s*True\b|\.hide\(true\)")
_FLAG_NAME = re.compile(r"""["'](--[A-Za-z0-9][\w-]*)["']""")
_HUNK_NAME = re.compile(
    r"\b(?:fn|def|class|impl(?:<[^>]*>)?|struct|enum|trait|func|function|interface|type)\s+"
    r"(?:[\w<>',\s]+\s+for\s+)?([A-Za-z_]\w*)"
)
# A line that may define something is checked by the regex below only when it starts like one
# (most lines do not, and a prefix test costs far less than a regex).
_DEF_STARTS = (
    "def ", "class ", "async ", "fn ", "fun ", "pub ", "pub(", "func ", "function", "export ", "struct ",
    "enum ", "trait ", "impl ", "impl<", "interface ", "type ", "mod ", "static ", "public ", "private ",
    "protected ", "internal ", "unsafe ", "const fn ", "abstract ", "final ", "sealed ", "data class ",
    "object ", "override ",
)  # fmt: skip
_ANY_DEF = re.compile(
    r"(?:(?:pub(?:\([^)]*\))?|export|default|declare|async|static|public|private|protected|internal|final"
    r"|abstract|sealed|override|unsafe|const|extern(?:\s+\"C\")?|inline|virtual|data)\s+)*"
    r"(?:def|class|fn|fun|func|function\*?|struct|enum|trait|interface|impl(?:<[^>]*>)?|type|mod|object)\s+"
    r"(?:\([^)]*\)\s*)?"  # a Go method's receiver
    r"(?:[\w:<>',\s&]+?\s+for\s+)?"  # Rust's `impl Trait for Type`
    r"(?P<name>[A-Za-z_$][\w$]*)"
)
_TEST_DEF = re.compile(r"(?:async\s+)?(?:def|fn|func)\s+(?P<name>[A-Za-z_]\w*)")
# The file a package's names are imported from: what it imports, it re-exports.
_PACKAGE_ENTRY = frozenset({"__init__.py", "__init__.pyi", "mod.rs", "lib.rs", "index.ts", "index.js", "index.mjs"})
_REEXPORT = re.compile(r"^\s*(?:pub\s+use\b|export\s*(?:\*|\{|type\s*\{)|__all__\b)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_ENV_READ = re.compile(
    r"""(?:getenv|environ(?:\.get)?|env::var(?:_os)?|process\.env|os\.LookupEnv|Getenv)\s*[(\[.]\s*["']?(?P<key>[A-Z][A-Z0-9_]{2,})"""
)
# Code that bounds work: a visited set, a memo or cache, a limit, a depth, a deadline (what a fix of
# an exponential blow-up or a hang adds; read in code, not in strings or comments).
_BOUNDING_CODE = re.compile(
    r"\b(visited|seen|memo\w*|\w*cache[sd]?|\w*_limit|limit|max_depth|\w*_depth|budget|timeout|deadline|fuel"
    r"|worklist|recursion_limit|max_iterations?)\b",
    re.I,
)
# A GPU kernel-language function (Triton, TileLang, CuTe DSL, Numba CUDA …): device code compiled
# into kernels, called from other kernels, not an API a user imports.
_KERNEL_DECORATOR = re.compile(
    r"^@(?:triton|tl|tilelang|T|tvm|te|cute|cutlass|numba\.cuda|cuda|ct|tk|helion|wp|warp|ti|taichi)"
    r"\.(?:jit|kernel|macro|prim_func|func|inline|autotune|heuristics)\b"
)
# Lines that mark the definition after them as a test (Rust's #[test], pytest's marks).
_TEST_MARK = ("#[test", "#[tokio::test", "#[rstest", "#[test_case", "@pytest.mark", "@Test")
_OPTION_VALUE = re.compile(r"""["']([A-Za-z0-9][\w.-]{0,30})["']""")
# A module of shared command-line options (cmdoptions.py, cli/options.py, args.rs).
_OPTIONS_MODULE = re.compile(r"(options|opts|flags|args|arguments)[^/]*$", re.I)
_LISTED_OPTION = re.compile(r"^\s*(?:[\w]+\.)*(\w+)(?:\(\))?\s*,?\s*$")  # a line that only lists one
# Literal words without which a patch holds none of the above (see _mentions).
_FLAG_WORDS = ("add_argument", "option(", "Option(", "flag.", ".flag(", "arg(")
_BOUNDING_WORDS = (
    "visited", "seen", "memo", "ache", "imit", "LIMIT", "epth", "EPTH", "udget", "imeout", "TIMEOUT", "eadline",
    "fuel", "worklist", "max_iter", "MAX_ITER",
)  # fmt: skip
MAX_STATEMENT_LINES = 15  # a flag's call split over more lines than this is not followed


@dataclass
class SourceScan:
    """What the patches define, remove and name: read once per commit, line by line."""

    removed_defs: dict[str, bool] = field(default_factory=dict)  # public name → found in a removed file
    added_defs: set[str] = field(default_factory=set)  # public names defined or re-exported
    renamed_defs: dict[str, str] = field(default_factory=dict)  # old public name → the name replacing it
    flags_old: dict[str, str] = field(default_factory=dict)  # flag → its call, before the change
    flags_new: dict[str, str] = field(default_factory=dict)  # … and after
    hidden_flags: set[str] = field(default_factory=set)
    hidden_before: set[str] = field(default_factory=set)  # flags hidden before the change
    quoted_after: set[str] = field(default_factory=set)  # "--flag" strings on added lines, in any call
    option_words_after: set[str] = field(default_factory=set)  # words added to options modules
    hunk_names: list[str] = field(default_factory=list)  # functions/classes named by hunk headers
    deltas: list[FileDelta] = field(default_factory=list)
    tests_added: list[str] = field(default_factory=list)  # test functions the test files add
    headings_added: list[str] = field(default_factory=list)  # Markdown headings the docs add
    env_added: list[str] = field(default_factory=list)  # environment variables the code starts reading
    bounds_work: bool = False  # added code keeps a visited set, a memo, a limit or a deadline

    @property
    def flags_removed(self) -> set[str]:
        """Flags users could pass before and cannot after: a hidden one was never theirs, and one
        whose name an added line still spells (`partial(Option, "--pre", …)`), or whose option
        object an options module now lists (`pre,` in cmdoptions.py), moved rather than went."""
        gone = set(self.flags_old) - set(self.flags_new) - self.hidden_before - self.quoted_after
        return {f for f in gone if f[2:].replace("-", "_") not in self.option_words_after}

    @property
    def flags_added(self) -> set[str]:
        return set(self.flags_new) - set(self.flags_old)

    def flags_changed(self) -> list[tuple[str, tuple[str, ...]]]:
        """(flag, values its call gains) for each flag defined before and after, differently."""
        out = []
        for flag, new in self.flags_new.items():
            old = self.flags_old.get(flag)
            if old is None or " ".join(old.split()) == " ".join(new.split()):
                continue
            before = set(_OPTION_VALUE.findall(old))
            gained = tuple(v for v in dict.fromkeys(_OPTION_VALUE.findall(new)) if v not in before)
            out.append((flag, gained))
        return out


def _may_call_flag(text: str) -> bool:
    """False when `_FLAG_CALL` cannot match: each of its alternatives holds one of these literal
    words. Five substring tests cost a thirtieth of the expression's search (its `\\b`s keep the
    regular expression engine from skipping ahead), and every line of a flag-defining patch is tested."""
    return "arg(" in text or "option(" in text or "Option(" in text or "flag" in text or "add_argument" in text


class _Statements:
    """Calls that define command-line flags, followed over the lines they are split across, on
    one side of the diff (before or after): `add_argument(` on one line and `"--format",` on the
    next is one flag, not a call without a flag and a stray string."""

    __slots__ = ("found", "hidden", "open", "depth")

    def __init__(self, found: dict[str, str], hidden: set[str]):
        self.found, self.hidden = found, hidden
        self.open: list[str] = []
        self.depth = 0

    def feed(self, text: str) -> None:
        if self.open:
            self.open.append(text)
            self.depth += text.count("(") - text.count(")")
            if self.depth <= 0 or len(self.open) >= MAX_STATEMENT_LINES:
                self.close()
        elif _may_call_flag(text) and _FLAG_CALL.search(text):
            self.open = [text]
            self.depth = text.count("(") - text.count(")")
            if self.depth <= 0:
                self.close()

    def close(self) -> None:
        if self.open:
            statement = " ".join(part.strip() for part in self.open)
            names = _FLAG_NAME.findall(statement)
            for name in names:
                self.found.setdefault(name, statement)
            if names and _HIDDEN_FLAG.search(statement):
                self.hidden.update(names)
        self.open, self.depth = [], 0


def scan_source(stats: FileStats, profile: RepoProfile, bounds_wanted: bool = False) -> SourceScan:
    """Every patch read once: public definitions added, removed and re-exported (in files on the
    public surface), command-line flags before and after, what each source file adds, removes and
    changes by name, the names hunk headers give, and what test and docs files add. Code that
    bounds work (`bounds_work`) is looked for only when `bounds_wanted` (the message speaks of a
    hang or a blow-up)."""
    scan = SourceScan()
    # Flag names on added lines matter only when some patch defines flags at all.
    flagged = any(f.patch and _mentions(f.patch, _FLAG_WORDS) for f in stats.source)
    for f, kind in stats.files:
        if kind is FileKind.SOURCE:
            _scan_code(f, profile.is_public(f.path), scan, bounds_wanted, flagged)
        elif kind is FileKind.TEST and f.patch:
            _scan_tests(f, scan)
        elif kind is FileKind.DOCS and f.patch and extension(f.path) in ("md", "markdown", "mdx"):
            _scan_headings(f, scan)
    return scan


def _mentions(patch: str, words: tuple[str, ...]) -> bool:
    """Does the patch hold one of these literal words? A substring search runs through a patch a
    hundred times faster than a regular expression of alternatives, so it decides whether the
    expression is worth running on its lines."""
    return any(word in patch for word in words)


def _scan_code(f: FileChange, public: bool, scan: SourceScan, bounds_wanted: bool, flagged: bool) -> None:
    ext = extension(f.path)
    entry = f.path.rsplit("/", 1)[-1] in _PACKAGE_ENTRY
    old, new = _Statements(scan.flags_old, scan.hidden_before), _Statements(scan.flags_new, scan.hidden_flags)
    plus: list[str] = []
    minus: list[str] = []
    changed: list[str] = []
    current = ""
    env_plus: list[str] = []
    env_minus: set[str] = set()
    marked = False  # the next definition is a test (#[test] above it)
    kernel = {"-": False, "+": False}  # on that side, the next definition is a GPU kernel function
    gone_here = ""  # a public definition removed in the current change block (renamed if one replaces it)
    renaming: tuple[str, str] | None = None  # (old, new) when `def new(` replaced `def old(`: a rename
    # if the body goes on unchanged below it (the next line is context), a rewrite if not
    tests: list[str] = []
    # What no line of the patch can show is not looked for line by line (one search of the whole
    # patch, in C, instead of one per line).
    patch = f.patch or ""
    flags = _mentions(patch, _FLAG_WORDS)
    options_module = flagged and bool(_OPTIONS_MODULE.search(f.path))
    bounds = bounds_wanted and not scan.bounds_work and _mentions(patch, _BOUNDING_WORDS)
    env = "env" in patch or "Env" in patch
    for sign, text in diff_lines(patch):
        if sign == "@":
            renaming = None
            old.close()
            new.close()
            m = _HUNK_NAME.search(text.split("@@")[-1]) if text.count("@@") >= 2 else None
            current = m.group(1) if m else ""
            if m and current not in scan.hunk_names and not current.startswith("test"):
                scan.hunk_names.append(current)
            continue
        if flags:
            if sign != "+":
                old.feed(text)
            if sign != "-":
                new.feed(text)
        if renaming:
            if sign == " ":
                scan.renamed_defs.setdefault(*renaming)
            renaming = None
        stripped = text.lstrip()
        if not stripped:
            continue
        if sign == " ":
            gone_here = ""
        if stripped.startswith("@"):
            for side in ("-", "+") if sign == " " else (sign,):
                kernel[side] = kernel[side] or bool(_KERNEL_DECORATOR.match(stripped))
        if stripped.startswith(_TEST_MARK):
            marked = True
        elif stripped.startswith(_DEF_STARTS):
            m = _ANY_DEF.match(stripped)
            if m:
                current = m.group("name")
                if marked or current.startswith("test_"):
                    if sign == "+":
                        tests.append(current)
                elif sign != " ":
                    (plus if sign == "+" else minus).append(current)
            marked = False
            device = any(kernel[side] for side in (("-", "+") if sign == " " else (sign,)))
            if sign != " " and public and not device:
                name = public_name(text, ext)
                if name and not name.startswith("_"):  # private by convention
                    if sign == "-":
                        scan.removed_defs[name] = scan.removed_defs.get(name, False) or f.status == "removed"
                        gone_here = name
                    else:
                        scan.added_defs.add(name)
                        if gone_here and gone_here != name:
                            renaming = (gone_here, name)
                        gone_here = ""
            for side in ("-", "+") if sign == " " else (sign,):
                kernel[side] = False
        if sign == " ":
            continue
        if sign == "+" and flagged:
            if "--" in text:
                scan.quoted_after.update(_FLAG_NAME.findall(text))
            if options_module and (m := _LISTED_OPTION.match(text)):
                scan.option_words_after.add(m.group(1))  # `pre,` in an options group: named after its flag
        if current and (not changed or changed[-1] != current):
            changed.append(current)
        if sign == "+" and public and (entry or _REEXPORT.match(text)):
            scan.added_defs.update(_IDENT.findall(text))  # a name re-exported stays importable
        if env and ("env" in text or "Env" in text) and (m := _ENV_READ.search(text)):
            (env_plus.append(m.group("key")) if sign == "+" else env_minus.add(m.group("key")))
        if bounds and sign == "+" and not scan.bounds_work and _BOUNDING_CODE.search(text):
            scan.bounds_work = bool(_BOUNDING_CODE.search(code_of(text, ext)))
    old.close()
    new.close()
    added = [n for n in dict.fromkeys(plus) if n not in minus]
    removed = [n for n in dict.fromkeys(minus) if n not in plus]
    kept = [
        n
        for n in dict.fromkeys(changed)
        if n not in added and n not in removed and n not in tests and not n.startswith("test")
    ]
    scan.deltas.append(FileDelta(f.path, tuple(added), tuple(removed), tuple(kept)))
    scan.env_added += [k for k in dict.fromkeys(env_plus) if k not in env_minus and k not in scan.env_added]
    scan.tests_added += [t for t in dict.fromkeys(tests) if t not in scan.tests_added]


def _scan_tests(f: FileChange, scan: SourceScan) -> None:
    """The test functions a test file adds (named test…, or any Rust function under tests/)."""
    rust = extension(f.path) == "rs"
    plus: list[str] = []
    minus: set[str] = set()
    for sign, text in diff_lines(f.patch):
        if sign not in "+-":
            continue
        stripped = text.lstrip()
        if stripped.startswith(("def ", "async def ", "fn ", "func ")) and (m := _TEST_DEF.match(stripped)):
            name = m.group("name")
            if name.lower().startswith("test") or rust:
                (plus.append(name) if sign == "+" else minus.add(name))
    scan.tests_added += [n for n in dict.fromkeys(plus) if n not in minus and n not in scan.tests_added]


def _scan_headings(f: FileChange, scan: SourceScan) -> None:
    plus: list[str] = []
    minus: set[str] = set()
    for sign, text in diff_lines(f.patch):
        if sign in "+-" and text.startswith("#"):
            heading = text.lstrip("#").strip()
            if heading and len(heading) <= 60:
                (plus.append(heading) if sign == "+" else minus.add(heading))
    scan.headings_added += [h for h in dict.fromkeys(plus) if h not in minus and h not in scan.headings_added]
