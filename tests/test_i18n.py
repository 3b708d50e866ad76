"""The message catalogue: both languages hold the same keys with the same fields."""

from string import Formatter

from bot.i18n import LANGS, catalogue, text


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(template) if name}


# Keys whose languages count differently, so their sentences use different fields: the reason.
DIFFERENT_FIELDS = {
    "common.names_more": "Chinese says how many names in all (等 5 个), English how many more",
    "coverage.names_more": "the same, in the coverage line",
    "coverage.names_more_after_wide": "the same, in the coverage line",
    "offline.behaviour.more_defaults": "Chinese counts every changed default (等 3 项), English the others",
}


def test_every_key_in_both_languages_with_the_same_fields():
    zh, en = catalogue("zh"), catalogue("en")
    assert set(zh) == set(en), f"only in zh: {set(zh) - set(en)}; only in en: {set(en) - set(zh)}"
    for key in zh:
        if key not in DIFFERENT_FIELDS:
            assert _fields(zh[key]) == _fields(en[key]), key


def test_every_key_renders_in_every_language():
    for lang in LANGS:
        for key, template in catalogue(lang).items():
            filled = text(lang, key, **{name: "X" for name in _fields(template)})
            assert filled.strip(), key


def test_unknown_language_falls_back_to_chinese():
    assert text("fr", "common.language_name") == "中文"


# --- no sentence a user reads is written outside the catalogue ------------------------------------
#
# An AST scan of bot/ and handlers/: every string literal that reads as a sentence — three English
# words in a row, or five Chinese characters — must be something no person reads as the bot's
# words, said here with the reason. Docstrings, log calls, assertions and the exceptions of
# programming errors are not read by users; everything else is listed.

import ast  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENGLISH = re.compile(r"\b[A-Za-z][A-Za-z']*[,:;]? [A-Za-z][A-Za-z']*[,:;]? [a-z][a-z']+\b")
CHINESE = re.compile(r"[\u3400-\u9fff][\u3400-\u9fff，。：；、？！“”（）]{4,}")
LOGGERS = {"log", "logger", "logging", "warnings"}
# Raised for a programmer or for the machinery, never shown: bugs, the queue's "run me again"
# (RetryLater), a send the ledger closes (UncertainSend), a read-back that gave up (logged).
UNSHOWN_ERRORS = {
    "ValueError",
    "TypeError",
    "KeyError",
    "RuntimeError",
    "AssertionError",
    "NotImplementedError",
    "FileNotFoundError",
    "AttributeError",
    "RetryLater",
    "UncertainSend",
    "_OutOfReach",
}

# Whole files or folders not scanned, and why.
NOT_SCANNED = {
    "bot/i18n/": "the catalogue's own package",
    "bot/core/metrics.py": "Prometheus HELP texts, for operators' dashboards (English by convention)",
    "bot/redact/": "word lists of the secret detector (data, not sentences)",
    "bot/period_questions/terms.py": "word lists for the history search: question words",
    "bot/core/glossary.py": "the Chinese→English glossary of the searches (data, not sentences)",
    "bot/period_questions/index.py": "SQL statements of the history index",
    "bot/backup/keys.py": "the key families' table: each family's reason, for operators reading the code",
}
# Literals a person never reads as the bot's sentence, by file: (start of the literal, why).
ALLOWED: dict[str, list[tuple[str, str]]] = {
    "bot/__main__.py": [("examples:", "the CLI's --help, English like argparse's own words (usage:, options:)")],
    "bot/core/store.py": [
        ("No connection available", "matches redis-py's message"),
        ("if redis.call", "a Lua script"),
        ("local v = redis.call", "a Lua script"),
    ],
    "bot/runtime/fairness.py": [("if redis.call", "a Lua script")],
    "bot/core/prompts.py": [
        ("the shipped templates", "operator error: an install without its templates"),
        ("or the shipped templates", "operator error: an install without its templates"),
    ],
    "bot/channels/threads.py": [("the and for with", "stop words for matching titles")],
    "bot/alerts/runner.py": [
        ("another poll of this subscription", "run_once's RetryLater reason: the queue's, never shown"),
        ("alert poll of ", "what run_once's log line names"),
    ],
    "bot/watch/runner.py": [("another run of this person", "run_once's RetryLater reason: the queue's, never shown")],
    "bot/fork/conflict.py": [
        ("^(changed in both", "git merge-tree's own report, parsed"),
        ("added in both", "git merge-tree's own report, parsed"),
        ("removed in local", "git merge-tree's own report, parsed"),
        ("removed in remote", "git merge-tree's own report, parsed"),
    ],
    "bot/sources/mirror.py": [
        ("repository .* not found", "git fetch's own messages, parsed"),
        ("couldn't find remote ref", "git fetch's own message, parsed"),
    ],
    "bot/period_questions/period.py": [
        ("([0-9]{1,3}|", "a regular expression for Chinese numbers"),
        ("(?:自从|自|从)?", "a regular expression for Chinese weekdays"),
    ],
    "bot/sources/github/source.py": [
        ("GitHub's GraphQL API needs a token", "logged only: why PR labels are not read"),
        ("GraphQL cannot see the repository", "logged only: why PR labels are not read"),
        ('") { ... on Commit', "a GraphQL query"),
    ],
    "bot/sources/message.py": [
        ("(no commit message)", "stored as an empty commit's title: data, cached"),
        ("^(signed-off-by", "a regular expression"),
        ("This reverts commit (", "a regular expression for git's revert message"),
    ],
    "bot/analysis/analyze.py": [
        (
            "(no diff available)",
            "what the model reads in an empty <diff> block (the prompt's "
            "data, the same in both languages: not in a template, whose "
            "hash keys the cached analyses)",
        ),
        ("(no file list available)", "what the model reads in an empty <files> block"),
    ],
    "bot/analysis/answer_schema.py": [
        ("^(?:(?:none|nothing", "a regular expression for the ways a model says 'nothing'"),
        ("a an the and or", "a word list for matching a summary to the commit"),
    ],
    "bot/taste/features.py": [("the an of to", "stop words the model ignores, not a sentence")],
    "bot/taste/notes.py": [
        ("unreleased|next release", "a regular expression for changelog headings"),
        ("breaking removal removed", "towncrier's fragment type names, not a sentence"),
    ],
    "bot/analysis/prompt_text.py": [
        ("<details>", "a regular expression for Dependabot's own boilerplate"),
        ("^\\s*Dependabot will resolve", "a regular expression for Dependabot's own boilerplate"),
    ],
    "bot/analysis/hints.py": [
        ("announced in this project", "the LLM prompt's data lines, English like the offline hint"),
        ("(as a breaking or security", "the LLM prompt's data lines"),
        ("; usually listed under", "the LLM prompt's data lines"),
        ("similar commits of this", "the LLM prompt's data lines"),
    ],
    "bot/analysis/llm/responses.py": [
        ("context (?:length", "a regular expression for the servers' own context-window errors"),
        ("maximum context length", "the same"),
        ("exceed context window", "the same"),
        ("messages resulted in", "the same"),
        ("\\((\\d+) in the messages", "the same"),
        ("(\\d+) of text input", "the same"),
    ],
    "bot/analysis/offline/words.py": [("\\b(pure(ly)? refactor", "a regular expression for titles")],
    "bot/analysis/offline/patch.py": [("py pyi pyx pxd rb", "file extensions")],
    "bot/core/file_kinds.py": [
        ("py pyi", "file extensions"),
        ("yaml yml toml", "file extensions"),
        ("md markdown", "file extensions"),
        ("pipfile package.json", "file names"),
        ("cmakelists.txt", "file names"),
        ("png jpg", "file extensions"),
    ],
    "bot/analysis/offline/title.py": [
        ("add adds", "verbs of titles"),
        ("fix fixes", "verbs of titles"),
        ("remove removes", "verbs of titles"),
        ("refactor refactors", "verbs of titles"),
        ("optimize optimise", "verbs of titles"),
        ("bump bumps", "verbs of titles"),
    ],
    "bot/analysis/summary.py": [
        (
            '"bullets" must be',
            "a headline answer's rejection: read by the model in the "
            "corrective message (prompts/headline_retry) and logged; the "
            "reader's notice names the reason by its code",
        ),
        ("a bullet copies", "the same"),
        ("the answer was cut off", "the same"),
        ("the answer was blank", "the same"),
    ],
    "bot/diffs/packing.py": [
        ("@generated", "a regular expression for generated files"),
        ("(?i)do not edit", "a regular expression for generated files"),
        ("GIT binary patch", "git's own marker, parsed"),
    ],
    "bot/sources/gitlab/convert.py": [("See merge request", "GitLab's merge commit message, parsed")],
    "bot/diffs/hunks.py": [("(no content changes)", "part of the diff text given to the model, a diff format")],
    "bot/diffs/asked.py": [("a an the and or", "stop words for matching a question to hunks")],
    "bot/diffs/relevant.py": [
        ("not asked about", "a reason code of the diff's closing list; reader.py says it from coverage.reason")
    ],
    "handlers/slack/api.py": [
        ("body is not", "HTTP answer to Slack's servers"),
        ("field `actions` has", "HTTP answer to Slack's servers"),
        ("` has the wrong type", "HTTP answer to Slack's servers"),
        ("As you gave `client`", "matches Bolt's own log line"),
    ],
    "handlers/feishu/verify.py": [
        ("body is not", "HTTP answer to Feishu's servers"),
        ("body cannot be", "HTTP answer to Feishu's servers"),
        ("payload is not", "HTTP answer to Feishu's servers"),
        ("wrong verification token", "HTTP answer to Feishu's servers"),
    ],
    "handlers/feishu/platform.py": [("the app lacks the scope", "logged only: why a read-back is impossible")],
}


def _skipped_by_context(node: ast.AST, parents: dict) -> bool:
    child, node = node, parents.get(node)
    while node is not None:
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in LOGGERS:
                return True
            if isinstance(func, ast.Name) and func.id in UNSHOWN_ERRORS:
                return True
            if any(k.arg in ("help", "description") and k is child for k in node.keywords):
                return True  # argparse's --help: English, like argparse's own words
        child, node = node, parents.get(node)
    return False


def inline_sentences(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docstrings:
            continue
        if (ENGLISH.search(node.value) or CHINESE.search(node.value)) and not _skipped_by_context(node, parents):
            found.append((node.lineno, node.value))
    return found


def _scanned_files() -> list[Path]:
    files = sorted(p for folder in ("bot", "handlers") for p in (ROOT / folder).rglob("*.py"))
    return [p for p in files if not any(p.relative_to(ROOT).as_posix().startswith(x) for x in NOT_SCANNED)]


def test_no_sentence_a_user_reads_is_written_outside_the_catalogue():
    stray, used = [], set()
    for path in _scanned_files():
        rel = path.relative_to(ROOT).as_posix()
        for line, literal in inline_sentences(path):
            allowed = [start for start, _ in ALLOWED.get(rel, []) if literal.lstrip().startswith(start)]
            if allowed:
                used.add((rel, allowed[0]))
            else:
                stray.append(f"{rel}:{line}: {literal[:80]!r}")
    assert stray == [], "sentences outside bot/i18n/*.toml (use text()/phrase(), or say here why not):\n" + "\n".join(
        stray
    )
    stale = [(rel, start) for rel, entries in ALLOWED.items() for start, _ in entries if (rel, start) not in used]
    assert stale == [], f"allowed literals no longer found (remove them): {stale}"


def test_the_scan_finds_a_sentence_written_inline(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        'def f(platform):\n    """Docs are fine."""\n    log.info("a log line is fine too")\n'
        '    platform.send(Notice("Something went wrong here."))\n'
        '    return "请稍后再试一次"\n',
        encoding="utf-8",
    )
    assert sorted(line for line, _ in inline_sentences(sample)) == [4, 5]


def test_a_phrase_is_english_where_a_string_is_expected_and_said_again_in_any_language():
    import copy
    import pickle

    from bot.core.models import UsageError
    from bot.i18n import OneOf, localize, phrase

    said = phrase("errors.bad_choice", option="lang", choices=OneOf(("zh", "en")), value="fr")
    assert said == "lang must be zh or en, not 'fr'." and f"{said}" == said
    assert said.say("zh") == "lang 只能是 zh 或 en，不能是“fr”。"
    error = UsageError(phrase("errors.bad_tz", value="Mars/Base"))
    assert str(error).startswith("Unknown time zone 'Mars/Base'")
    assert localize(error, "zh").startswith("未知时区“Mars/Base”")
    for again in (pickle.loads(pickle.dumps(error)), copy.deepcopy(error)):
        assert localize(again, "zh") == localize(error, "zh")
    assert localize(UsageError("not from the catalogue"), "zh") == "not from the catalogue"
    outer = phrase("notices.build_failed", repo="a/b", label="2026-01-28", reason=phrase("errors.store_busy"))
    assert outer.say("zh") == "⚠️ 无法生成 a/b 2026-01-28 的日报：机器人现在非常忙（存储连接全部占用）。"
