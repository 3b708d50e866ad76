"""The command grammar shared by Slack's `/digest`, Feishu's @-commands and the console.

Pure: text in, a command (or a UsageError with one sentence) out.

  digest [DATE|A..B|today|yesterday] [REPO …]
  subscribe REPO [at HH:MM] [tz ZONE] [lang zh|en] [min high|medium|low] [branch B] [empty post|skip]
  unsubscribe REPO
  list
  ask <SHA|#PR> QUESTION
  config [lang zh|en] [tz ZONE] [questions mention|all] [file on|off]
  help
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from settings import check_timezone

from .models import UsageError
from .window import is_date_token

ALIASES = {
    "digest": "digest", "日报": "digest", "摘要": "digest",
    "subscribe": "subscribe", "sub": "subscribe", "订阅": "subscribe",
    "unsubscribe": "unsubscribe", "unsub": "unsubscribe", "退订": "unsubscribe", "取消订阅": "unsubscribe",
    "list": "list", "ls": "list", "列表": "list", "订阅列表": "list",
    "ask": "ask", "问": "ask", "提问": "ask",
    "config": "config", "settings": "config", "设置": "config",
    "help": "help", "帮助": "help", "?": "help", "？": "help",
}
COMMAND_WORDS = frozenset(ALIASES)
_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_BRANCH = re.compile(r"^(?!-)[A-Za-z0-9._/\-]{1,200}$")
_REF = re.compile(r"^(#\d{1,9}|[0-9a-fA-F]{4,40})$")

USAGE = {
    "zh": {
        "digest": "digest [日期|A..B|today|yesterday] [owner/repo …]",
        "subscribe": "subscribe owner/repo [at 09:30] [tz Asia/Shanghai] [lang zh|en] [min high|medium|low] [branch main] [empty post|skip]",
        "unsubscribe": "unsubscribe owner/repo",
        "list": "list",
        "ask": "ask <sha|#PR> <问题>",
        "config": "config [lang zh|en] [tz Asia/Shanghai] [questions mention|all] [file on|off]",
        "help": "help",
    },
    "en": {
        "digest": "digest [DATE|A..B|today|yesterday] [owner/repo …]",
        "subscribe": "subscribe owner/repo [at 09:30] [tz Asia/Shanghai] [lang zh|en] [min high|medium|low] [branch main] [empty post|skip]",
        "unsubscribe": "unsubscribe owner/repo",
        "list": "list",
        "ask": "ask <sha|#PR> <question>",
        "config": "config [lang zh|en] [tz Asia/Shanghai] [questions mention|all] [file on|off]",
        "help": "help",
    },
}

HELP_INTRO = {
    "zh": ("提交日报机器人：每天推送订阅仓库前一天的提交分析，可查询任意日期，并可在线程里追问任一提交。\n"
           "命令（Slack 用 `{prefix}`，飞书里 @我 后直接写命令）："),
    "en": ("Commit digest bot: a daily digest of your repositories' commits, any date on demand, and "
           "follow-up questions about any commit in the thread.\nCommands (`{prefix}` on Slack; on Feishu, "
           "mention me and type the command):"),
}


class CommandError(UsageError):
    """A malformed command; `command` names which usage line to show with it."""

    def __init__(self, message: str, command: str | None = None):
        super().__init__(message)
        self.command = command


@dataclass(frozen=True)
class DigestCmd:
    when: str | None  # None: yesterday
    repos: tuple[str, ...]


@dataclass(frozen=True)
class SubscribeCmd:
    repo: str
    at: str | None = None
    tz: str | None = None
    lang: str | None = None
    min_importance: str | None = None
    branch: str | None = None
    post_empty: bool | None = None


@dataclass(frozen=True)
class UnsubscribeCmd:
    repo: str


@dataclass(frozen=True)
class ListCmd:
    pass


@dataclass(frozen=True)
class AskCmd:
    ref: str
    question: str


@dataclass(frozen=True)
class ConfigCmd:
    lang: str | None = None
    tz: str | None = None
    questions: str | None = None
    file: bool | None = None


@dataclass(frozen=True)
class HelpCmd:
    pass


Command = DigestCmd | SubscribeCmd | UnsubscribeCmd | ListCmd | AskCmd | ConfigCmd | HelpCmd


def usage(lang: str, command: str | None = None, prefix: str = "/digest") -> str:
    lines = USAGE.get(lang, USAGE["en"])
    if command:
        return f"{prefix} {lines[command]}"
    return "\n".join(f"• `{prefix} {line}`" for line in lines.values())


def help_text(lang: str, prefix: str = "/digest") -> str:
    return HELP_INTRO.get(lang, HELP_INTRO["en"]).format(prefix=prefix) + "\n" + usage(lang, prefix=prefix)


def parse_command(text: str) -> Command:
    """Parse the words after `/digest` (or after the @-mention). Empty → yesterday's digest."""
    words = (text or "").split()
    if not words:
        return DigestCmd(None, ())
    head = words[0].lower()
    if head not in ALIASES:
        # `/digest 2026-01-28 owner/repo` — the verb is optional for digests.
        if is_date_token(head) or "/" in head:
            return _digest(words)
        raise CommandError(f"Unknown command '{words[0]}'.", None)
    verb, args = ALIASES[head], words[1:]
    return {"digest": _digest, "subscribe": _subscribe, "unsubscribe": _unsubscribe, "list": _list,
            "ask": _ask, "config": _config, "help": lambda a: HelpCmd()}[verb](args)


def _digest(args: list[str]) -> DigestCmd:
    when = None
    repos: list[str] = []
    for word in args:
        if is_date_token(word):
            if when is not None:
                raise CommandError(f"Two dates given ('{when}' and '{word}'); use a range A..B instead.", "digest")
            when = word
        else:
            repos.append(_repo(word, "digest"))
    return DigestCmd(when, tuple(dict.fromkeys(repos)))


def _repo(word: str, command: str) -> str:
    word = word.strip("<>")  # Slack auto-links owner/name-looking text sometimes
    if "|" in word:
        word = word.split("|", 1)[1]
    word = re.sub(r"^https?://[^/]+/", "", word).removesuffix(".git").rstrip("/") or word
    if not word or word.startswith("-"):
        raise CommandError(f"'{word}' is not a repository; use owner/name.", command)
    return word


def _options(args: list[str], allowed: dict[str, str], command: str) -> dict[str, str]:
    """`key value` pairs; every key once, every value present."""
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        key = args[i].lower()
        if key not in allowed:
            raise CommandError(f"Unknown option '{args[i]}' (expected one of: {', '.join(allowed)}).", command)
        if i + 1 >= len(args):
            raise CommandError(f"Option '{key}' needs a value ({allowed[key]}).", command)
        if key in found:
            raise CommandError(f"Option '{key}' is given twice.", command)
        found[key] = args[i + 1]
        i += 2
    return found


def _check_choice(value: str, choices: tuple[str, ...], what: str, command: str) -> str:
    v = value.lower()
    if v not in choices:
        raise CommandError(f"{what} must be {' or '.join(choices)}, not '{value}'.", command)
    return v


def _check_tz(value: str, command: str) -> str:
    try:
        check_timezone(value)
    except ValueError as exc:
        raise CommandError(f"{str(exc)[0].upper()}{str(exc)[1:]}.", command) from None
    return value


def _subscribe(args: list[str]) -> SubscribeCmd:
    if not args:
        raise CommandError("Name the repository to subscribe to.", "subscribe")
    repo = _repo(args[0], "subscribe")
    opts = _options(args[1:], {"at": "HH:MM", "tz": "an IANA zone", "lang": "zh|en",
                               "min": "high|medium|low", "branch": "a branch name", "empty": "post|skip"},
                    "subscribe")
    at = opts.get("at")
    if at is not None:
        m = _HHMM.match(at)
        if not m:
            raise CommandError(f"'at' must be a time like 09:30, not '{at}'.", "subscribe")
        at = f"{int(m.group(1)):02d}:{m.group(2)}"
    branch = opts.get("branch")
    if branch is not None and not _BRANCH.match(branch):
        raise CommandError(f"'{branch}' is not a valid branch name.", "subscribe")
    return SubscribeCmd(
        repo=repo, at=at,
        tz=_check_tz(opts["tz"], "subscribe") if "tz" in opts else None,
        lang=_check_choice(opts["lang"], ("zh", "en"), "lang", "subscribe") if "lang" in opts else None,
        min_importance=_check_choice(opts["min"], ("high", "medium", "low"), "min", "subscribe") if "min" in opts else None,
        branch=branch,
        post_empty=(_check_choice(opts["empty"], ("post", "skip"), "empty", "subscribe") == "post") if "empty" in opts else None,
    )


def _unsubscribe(args: list[str]) -> UnsubscribeCmd:
    if len(args) != 1:
        raise CommandError("Name exactly one repository to unsubscribe from.", "unsubscribe")
    return UnsubscribeCmd(_repo(args[0], "unsubscribe"))


def _list(args: list[str]) -> ListCmd:
    if args:
        raise CommandError("'list' takes no arguments.", "list")
    return ListCmd()


def _ask(args: list[str]) -> AskCmd:
    if len(args) < 2:
        raise CommandError("Give a commit (SHA or #PR) and a question.", "ask")
    if not _REF.match(args[0]):
        raise CommandError(f"'{args[0]}' is not a commit SHA (hex) or a PR number like #123.", "ask")
    return AskCmd(args[0], " ".join(args[1:]))


def _config(args: list[str]) -> ConfigCmd:
    opts = _options(args, {"lang": "zh|en", "tz": "an IANA zone", "questions": "mention|all", "file": "on|off"},
                    "config")
    return ConfigCmd(
        lang=_check_choice(opts["lang"], ("zh", "en"), "lang", "config") if "lang" in opts else None,
        tz=_check_tz(opts["tz"], "config") if "tz" in opts else None,
        questions=_check_choice(opts["questions"], ("mention", "all"), "questions", "config") if "questions" in opts else None,
        file=(_check_choice(opts["file"], ("on", "off"), "file", "config") == "on") if "file" in opts else None,
    )


def looks_like_command(text: str) -> bool:
    """Top-level @-mentions and DMs are commands when they parse as one (including a digest
    without its verb: `@bot 2026-01-28 owner/repo`), or start with a command word (and then get
    that command's usage when malformed); anything else is a question."""
    try:
        parse_command(text)
        return bool(text.strip())
    except CommandError as exc:
        return exc.command is not None
