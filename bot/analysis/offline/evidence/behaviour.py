"""Behaviour changes: reverts, changed defaults, new command-line flags, crashes and pathological
slowness fixed, the public surface a profile declares, and the areas (parser, language server,
serializers, GPU kernels …) whose changes reach users in a recognisable way."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ....core.models import ChangeType, FileChange, Importance
from ....i18n import Count, Phrase, phrase, text
from ..context import Context, Fact, Insight, Risk
from ..lang import Names, num
from ..message import first_paragraphs
from ..patch import (
    assignments,
    change_blocks,
    changes_shipped_code,
    code_changes,
    diff_lines,
    field_defaults,
    getter_defaults,
    manages_memory,
    paired_assignments,
    rewords_messages,
    shared_state_files,
)
from ..paths import FileKind, extension, is_experimental
from ..stats import WhereNames, patches_unknown, runtime_lines

if TYPE_CHECKING:
    from ...repo_config import RepoProfile
    from ..stats import FileStats

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
_LSP_NAME = re.compile(r"(^|[/_-])(lsp|language_?server|languageserver)([/_.-]|$)", re.I)
_SERVER_NAME = re.compile(r"(^|[/_-])server([/_.-]|$)")
# A directory called "server" is a language server only when its patch speaks the protocol: a
# model server (text_generation_server/) or a web backend is not, and editors are not its users.
_LSP_WORDS = re.compile(
    r"\blsp|language.?server|text_?document|inlay|hover|code.?action|completion_?item|did_?(open|change|save)"
    r"|publish_?diagnostic|workspace.?folder",
    re.I,
)
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
_LIMIT_WORDS = re.compile(r"\b(limit\w*|budget\w*|bound(ed|s)?|cap(ped|s)?|threshold\w*|max(imum)?)\b", re.I)
_RECURSION_WORDS = re.compile(r"\b(recursi\w*|cycl(e|es|ic)|fixpoint|self-referential)\b", re.I)
_MESSAGE_WORDS = re.compile(r"\b(diagnostics?|error messages?|messages?|display|hover|signature help)\b", re.I)
_MEMORY_WORDS = re.compile(r"\b(gc|garbage|leak\w*|memory|refcount\w*|lifetimes?)\b", re.I)
_CHECK_WORDS = re.compile(r"\b(rule|lint|check)s?\b", re.I)


# --- reading the files ---------------------------------------------------------------------------


def _is_config_path(path: str, kind: FileKind) -> bool:
    if kind is FileKind.CONFIG:
        return True
    if kind is not FileKind.SOURCE:
        return False
    tokens = set(re.split(r"[/.]", path.lower()))
    return bool(tokens & _CONFIG_TOKENS) or path.lower().rsplit("/", 1)[-1].split(".")[0].endswith("_config")


def _declares_fields(patch: str) -> bool:
    """The patch may show a field declared with a default (`field(`, `Field(`, `attr.ib(`): the
    words first, since most patches have none and reading their lines costs."""
    return "default" in patch and ("ield(" in patch or ".ib(" in patch or "attrib(" in patch)


def _file_default_changes(f: FileChange, kind: FileKind, settings_file: bool) -> list[tuple[str, str, str, str]]:
    """(path, key, old, new) of the literal defaults one file's patch changes: assignments in a
    config file or settings module (nested ones when a line is replaced by the same line with
    another value), and settings read with a default anywhere (`config.get("a.b", True)`)."""
    changes = []
    # A dataclass or model field's default (`x: int = field(default=256)`) is named by its field.
    fields = field_defaults(f.patch) if kind is FileKind.SOURCE and _declares_fields(f.patch or "") else {}
    changes += [(f.path, key, a, b) for key, (a, b) in fields.items()]
    for minus, plus in change_blocks(f.patch):
        if not minus or not plus:
            continue
        pairs: dict[str, tuple[str, str]] = {}
        if settings_file:
            old = assignments(minus, kind is FileKind.CONFIG)
            new = assignments(plus, kind is FileKind.CONFIG)
            pairs.update((key, (old[key], new[key])) for key in old.keys() & new.keys())
            pairs.update(paired_assignments(minus, plus))
        old, new = getter_defaults(minus), getter_defaults(plus)
        pairs.update((key, (old[key], new[key])) for key in old.keys() & new.keys())
        for key, (a, b) in pairs.items():
            if fields and key == "default":
                continue  # the keyword of a field's call, named by its field above
            if a.strip("\"'") != b.strip("\"'"):
                changes.append((f.path, key, a, b))
    # A targeted edit changes a default; rewriting many values is a data table (tuned kernel
    # configs, fixtures), which would make every such commit look like a behaviour change.
    return changes if len(changes) <= 3 else []


def default_changes(stats: FileStats, profile: RepoProfile) -> list[tuple[str, str, str, str]]:
    """(path, key, old, new) for each literal default changed in a config file or settings module,
    or read with a new default in shipped source; a key changed in several files is named once."""
    found: list[tuple[str, str, str, str]] = []
    for f, kind in stats.files:
        if profile.is_internal(f.path) or _TOOLCHAIN_PIN.match(f.path.rsplit("/", 1)[-1].lower()):
            continue
        settings_file = _is_config_path(f.path, kind)
        if settings_file or (kind is FileKind.SOURCE and f.patch and (".get(" in f.patch or _declares_fields(f.patch))):
            found += [
                c for c in _file_default_changes(f, kind, settings_file) if c[1] not in {k for _, k, _, _ in found}
            ]
    # `re-resolve` in the defaults table and `installer.re-resolve` where it is read: one setting
    return [c for c in found if not any(o[1].endswith("." + c[1]) and o[2:] == c[2:] for o in found)]


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


def language_server_paths(c: Context) -> list[str]:
    """Shipped source paths of a language server: named one (lsp/, language_server/), or a
    `server` whose patch or path uses the protocol's words."""
    return [
        f.path
        for f in c.stats.source
        if not c.profile.is_internal(f.path)
        and (
            _LSP_NAME.search(f.path)
            or (_SERVER_NAME.search(f.path.lower()) and _LSP_WORDS.search(f"{f.path}\n{f.patch or ''}"))
        )
    ]


def _paths_with(c: Context, tokens: frozenset) -> list[str]:
    """Source paths with one of `tokens` as a whole directory or file-stem name."""
    return [
        f.path
        for f in c.stats.source
        if set(re.split(r"[/.]", f.path.lower())) & tokens and not c.profile.is_internal(f.path)
    ]


# --- conclusions ---------------------------------------------------------------------------------


class _MoreDefaults:
    """The defaults changed besides the one named: Chinese counts them all ('等 3 项'), English
    the others (' and 2 more'); both numbers are given, each language's sentence takes its own."""

    __slots__ = ("total",)

    def __init__(self, total: int):
        self.total = total

    def say(self, lang: str | None) -> str:
        return text(lang, "offline.behaviour.more_defaults", total=num(self.total), rest=num(self.total - 1))


def _sha(c: Context) -> Phrase | str:
    """The reverted commit's short SHA as an aside (' (abc1234)'), or nothing when unknown: the
    reverted title is the reader's title already, never quoted again or cut."""
    return phrase("offline.behaviour.reverted_sha", sha=c.commit.reverts[:7]) if c.commit.reverts else ""


def _evidenced(c: Context, shows: Callable[[FileChange], bool]) -> bool:
    """A shipped source file's patch shows what a word of the title says (or no patch is at hand)."""
    shipped = [f for f in c.stats.source if not c.profile.is_internal(f.path)]
    return bool(shipped) and (patches_unknown(c.stats, c.profile) or any(shows(f) for f in shipped))


def pathology_fixed(c: Context) -> bool:
    """An exponential blow-up or a hang fixed: the word is a hint; the commit has to be a fix or a
    speed-up of source code (by its type), or its added code has to bound the work (a visited set,
    a memo, a limit, a deadline); never one its author says keeps behaviour."""
    return (
        c.title.pathology
        and bool(c.stats.source_lines)
        and not c.title.preserving
        and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS, ChangeType.CI_BUILD)
        and (c.ctype in (ChangeType.BUGFIX, ChangeType.PERFORMANCE) or c.diff.bounds_work)
    )


def _reverts_code(c: Context) -> bool:
    """The revert changes code (or no patch is at hand to say otherwise)."""
    return patches_unknown(c.stats, c.profile) or changes_shipped_code(c.stats, c.profile)


def _restores(c: Context) -> bool:
    """The revert only puts deleted source back (it removes no source line): it takes nothing
    away from anyone, it undoes a removal."""
    return c.stats.known and c.stats.lines(FileKind.SOURCE)[1] == 0


def wrong_output_fixed(c: Context) -> bool:
    """A fix of output that was silently wrong: the message says the output was corrupted or wrong
    (a hint), the commit is a fix by its type and changes shipped code (what bears it out)."""
    return bool(c.title.wrong_output) and c.ctype is ChangeType.BUGFIX and changes_shipped_code(c.stats, c.profile)


def _public_default(c: Context) -> bool:
    """A changed default every user who leaves it unset gets: a literal default in public shipped
    source (a settings module, a dataclass field, a setting read with a default) with a stability
    promise — not a config file's value, not experimental code — whose old value names nothing
    the commit moves or renames (a default following a rename is the same default)."""
    path, _, old, _ = c.diff.default_changes[0]
    kinds = {f.path: kind for f, kind in c.stats.files}
    if kinds.get(path) is not FileKind.SOURCE or c.ctype in (ChangeType.DOCS, ChangeType.TESTS, ChangeType.REVERT):
        return False
    if c.profile.is_internal(path) or not c.profile.is_public(path) or is_experimental(path, c.profile):
        return False
    value = old.strip("\"'")
    moved = [p for pair in c.diff.moved_modules for p in pair] + [p for pair in c.diff.renamed_api for p in pair]
    return not any(value and value in re.split(r"[/.]", p) for p in moved)


# A refusal comparing with a limit (`x > max_image_fetch_size`), and a command-line flag declaring
# that limit with a default (clap's `#[clap(default_value = …, long)]`, argparse's `add_argument`).
_LIMIT_COMPARED = re.compile(r">=?\s*(?:self\.|args\.|config\.)?(\w*(?:max|limit)\w*)", re.I)
_FLAG_DECL = ("clap(", "arg(", "add_argument(")


def new_limit_flags(c: Context) -> list[str]:
    """Limits the commit adds as command-line flags with a default and refuses input beyond: a
    request larger than the default, accepted before, is refused now (round 8)."""
    names = {m.group(1) for _, _, check in c.diff.refusal_checks for m in _LIMIT_COMPARED.finditer(check)} - {""}
    if not names:
        return []
    out: list[str] = []
    for f, kind in c.stats.files:
        patch = f.patch or ""
        # substring tests before any line is read: most patches declare no flag
        if kind is not FileKind.SOURCE or "default" not in patch or not any(d in patch for d in _FLAG_DECL):
            continue
        here = [n for n in names if n in patch]
        if not here or c.profile.is_internal(f.path):
            continue
        added = [line for sign, line in diff_lines(f.patch) if sign == "+"]
        for name in here:
            declared = re.compile(rf"\b{name}\b\s*:|[\"']--?{name.replace('_', '[-_]')}[\"']")
            for i, line in enumerate(added):
                near = added[max(0, i - 2) : i + 3]
                if (
                    declared.search(line)
                    and any("default" in x for x in near)
                    and any(d in x and ("long" in x or "add_argument(" in x) for x in near for d in _FLAG_DECL)
                ):
                    out.append(name)
                    break
    return list(dict.fromkeys(out))


def facts(c: Context) -> list[Fact]:
    facts: list[Fact] = []
    t, d = c.title, c.diff
    if wrong_output_fixed(c):
        # Wrong answers nobody sees fail are worse than a crash: every result computed before is suspect.
        what = phrase("offline.said.quoted", text=t.wrong_output)  # the author's words, quoted
        facts.append(Fact(Importance.HIGH, phrase("offline.behaviour.fixes_wrong_output", what=what), order=39))
    # Backing out docstrings or comments (no code line) changes nothing that runs.
    if c.ctype is ChangeType.REVERT and c.stats.source_lines >= SMALL_REVERT and _reverts_code(c) and not _restores(c):
        facts.append(Fact(Importance.MEDIUM, phrase("offline.behaviour.reverts_landed_change", sha=_sha(c)), order=40))
    if d.default_changes:
        _, key, old, new = d.default_changes[0]
        more = _MoreDefaults(len(d.default_changes)) if len(d.default_changes) > 1 else ""
        facts.append(
            Fact(
                Importance.HIGH if _public_default(c) else Importance.MEDIUM,
                phrase("offline.behaviour.changes_default", key=key, old=old, new=new, more=more),
                order=41,
            )
        )
    elif (
        t.default_change
        and c.ctype not in (ChangeType.DOCS, ChangeType.TESTS)
        and runtime_lines(c.stats, c.profile)
        and c.stats.source
        and patches_unknown(c.stats, c.profile)  # with the patches at hand, a changed default shows in them
    ):
        facts.append(Fact(Importance.MEDIUM, phrase("offline.behaviour.title_says_default_changes"), order=41))
    limits = new_limit_flags(c) if d.refusal_checks and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS) else []
    if limits:
        facts.append(Fact(Importance.HIGH, phrase("offline.behaviour.adds_limit", names=Names(limits, 2)), order=41))
    if d.added_flags:
        flags = d.added_flags
        form = "one" if len(flags) == 1 else "other"
        facts.append(
            Fact(Importance.MEDIUM, phrase(f"offline.behaviour.adds_flags.{form}", flags=Names(flags)), order=42)
        )
    if pathology_fixed(c):
        facts.append(Fact(Importance.MEDIUM, phrase("offline.behaviour.removes_blowup_or_hang"), order=46))
    if (
        c.profile.declared
        and d.surface_kinds
        and c.stats.source_lines
        and c.ctype not in (ChangeType.REFACTOR, ChangeType.TESTS, ChangeType.DOCS)
    ):
        kinds = Names(d.surface_kinds, limit=len(d.surface_kinds))  # every kind, none left as "more"
        facts.append(Fact(Importance.MEDIUM, phrase("offline.behaviour.changes_public_surface", kinds=kinds), order=49))
    return facts


def risks(c: Context) -> list[Risk]:
    out: list[Risk] = []

    def add(order: int, risk: str, advice: str, **fields: object) -> None:
        """A risk and its advice, keys of [offline.behaviour]; `fields` fill the risk."""
        out.append(Risk(order, phrase(f"offline.behaviour.{risk}", **fields), phrase(f"offline.behaviour.{advice}")))

    stats, diff, title = c.stats, c.diff, c.title
    where = WhereNames(stats, diff.hunk_names)
    if c.ctype is ChangeType.REVERT:
        add(40, "reverted_change_gone", "check_reliance_on_revert", sha=_sha(c), where=where)
    if diff.default_changes:
        path, key, old, new = diff.default_changes[0]
        out.append(
            Risk(
                41,
                phrase("offline.behaviour.default_changed", path=path, key=key, old=old, new=new),
                phrase("offline.behaviour.pin_old_default", key=key, old=old),
            )
        )
    elif (
        title.default_change
        and c.ctype not in (ChangeType.DOCS, ChangeType.TESTS)
        and stats.source
        and patches_unknown(stats, c.profile)
    ):
        add(41, "default_behaviour_changes", "review_related_settings")
    if wrong_output_fixed(c):
        quoted = phrase("offline.said.quoted", text=title.wrong_output)
        add(39, "earlier_results_wrong", "recheck_earlier_results", where=where, what=quoted)
    # A crash the commit fixes: a feature that mentions crash-safety fixes none.
    if title.crash and c.ctype is ChangeType.BUGFIX and stats.source_lines:
        add(44, "other_inputs_may_crash", "test_neighbouring_inputs", where=where)
    body_text = first_paragraphs(c.commit.body, 800)
    if pathology_fixed(c):
        if _LIMIT_WORDS.search(body_text):
            add(45, "new_limits", "check_largest_inputs", where=where)
        elif re.search(r"\bhang|never (terminat|finish)", f"{title.subject} {body_text}", re.I):
            add(45, "hangs_now_finish", "check_hung_inputs_complete", where=where)
        else:
            add(45, "same_results_required", "compare_outputs", where=where)
    parser = _paths_with(c, _PARSER_TOKENS)
    if parser and c.ctype in (ChangeType.BUGFIX, ChangeType.FEATURE, ChangeType.OTHER, ChangeType.PERFORMANCE):
        add(47, "parser_changes", "compare_parse_results", paths=Names(parser, 2))
    server = language_server_paths(c)
    if server and c.ctype not in (ChangeType.REFACTOR, ChangeType.TESTS, ChangeType.DOCS):
        add(48, "language_server_changes", "try_in_editors", paths=Names(server, 2))
    output = _paths_with(c, _OUTPUT_TOKENS)
    behaviour = c.ctype in (ChangeType.BUGFIX, ChangeType.FEATURE, ChangeType.OTHER)
    schema = [p for p in output if "schema" in p.lower()]
    if schema and not server and behaviour:
        add(49, "json_schema_changes", "diff_exported_schemas", paths=Names(schema, 2))
    elif output and not server and behaviour:
        add(49, "serialized_output_changes", "compare_serialized_output", paths=Names(output, 2))
    # The words are hints: a recursion risk needs the title's own word, a message risk a message
    # the diff rewords, a memory risk code that manages memory.
    if behaviour and stats.source_lines and _RECURSION_WORDS.search(title.subject):
        add(50, "recursion_handling_changes", "check_deep_recursion", where=where)
    if behaviour and _MESSAGE_WORDS.search(title.subject) and _evidenced(c, rewords_messages):
        add(51, "message_text_changes", "update_message_snapshots", where=where)
    if (
        behaviour
        and stats.source_lines
        and re.search(r"\bfalse (positive|negative)s?\b", f"{title.subject} {body_text}", re.I)
    ):
        add(52, "reports_change", "clean_up_suppressions", where=where)
    if _MEMORY_WORDS.search(title.subject) and _evidenced(c, manages_memory):
        add(53, "memory_management_changes", "watch_memory", where=where)
    # Shared state is read from the code the diff changes (locks, threads, tasks), not from words
    # like "thread" or "async" in the title.
    shared = shared_state_files(f for f in stats.source if not c.profile.is_internal(f.path))
    if shared and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS):
        add(54, "concurrency_involved", "run_under_load", paths=Names(shared, 2))
    if c.ctype is ChangeType.FEATURE and _CHECK_WORDS.search(title.subject) and stats.source_lines:
        add(55, "new_check_reports", "dry_run_check", where=where)
    # A speed-up or a rewrite of kernels that already ran is meant to keep their results, and on
    # some hardware may not; a fix is meant to change them, and a new kernel moves no result users
    # had. Generic for a kernel library, so it speaks only when nothing more specific does.
    kernels = set(c.diff.gpu_kernels)
    tuned = c.ctype in (ChangeType.PERFORMANCE, ChangeType.REFACTOR)
    changed = [
        f.path
        for f in stats.source
        if f.path in kernels and f.status == "modified" and (f.patch is None or code_changes(f))
    ]
    if tuned and changed:
        out.append(
            Risk(
                56,
                phrase("offline.behaviour.gpu_kernels_change", paths=Names(changed, 2)),
                phrase("offline.behaviour.compare_on_target_gpus"),
                fallback=True,
            )
        )
    return out


def insights(c: Context) -> list[Insight]:
    gpu = c.diff.gpu_kernels
    if not gpu:
        return []
    files = Count(len(gpu), "offline.behaviour.gpu_kernel_files")
    return [
        Insight(
            "performance", 20, phrase("offline.behaviour.gpu_kernels_performance", files=files, paths=Names(gpu, 2))
        )
    ]
