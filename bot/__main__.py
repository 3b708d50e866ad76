"""Command line: `python -m bot {digest,ask,eval,feedback,profile,run,serve,worker,clock,settings,health,backup,restore}` (also `digest-bot`).

Imports are lazy: `--help` only needs argparse, and no path here imports the Slack or Feishu SDK
unless that platform is configured. Every failure the user can cause or meet ends as one line on
stderr with exit code 2 (usage) or 1 (runtime), never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: --help loads no pydantic (settings are read lazily below)
    from settings import Settings

EXAMPLES = """examples:
  python -m bot digest --repo vllm-project/vllm --date 2026-01-28
  python -m bot digest --repo . --date yesterday --lang en --format json --out day.json
  python -m bot digest --repo vllm-project/vllm --fork org/our-fork@main   # downstream impact
  python -m bot digest --repo astral-sh/uv --range 0.11.8..0.11.9           # an upgrade report
  python -m bot digest --repo . --release --format changelog               # the newest tag's notes
  python -m bot ask --repo vllm-project/vllm --commit af9b69f "what could this break?"
  python -m bot ask --repo vllm-project/vllm --since 2026-01-19 --until 2026-01-25 "what changed in the scheduler?"
  python -m bot ask --repo vllm-project/vllm "上周 FP8 在 ROCm 上有什么改动？"
  python -m bot feedback import corrections.jsonl --repo acme/app=/srv/app   # readers' level corrections
  python -m bot feedback export --repo acme/app --out corrections.jsonl
  python -m bot profile --repo astral-sh/ruff --date 2026-04-15   # what its release notes taught
  python -m bot run            # chat on Slack/Feishu when configured, else in this terminal
  python -m bot backup bot.backup          # what the bot keeps in Redis, no caches
  python -m bot restore bot.backup         # into an empty Redis (REDIS_URL)

exit codes: 0 done, 1 failure, 2 bad input, 3 digest written but the configured LLM analysed no commit
"""


_SAY: list[str | None] = [None]  # the CLI's language while it parses: `--lang`, else DEFAULT_LANG (read when needed)


def _parse_lang() -> str:
    """The language a parse error is said in: `--lang` as typed, else the configured DEFAULT_LANG
    (read only when there is an error to say), as every other line of the run is."""
    said = _SAY[0] or _configured_lang()
    _SAY[0] = said
    return said


def _configured_lang() -> str:
    """DEFAULT_LANG from the environment and `.env`; zh (its default) when the settings cannot be read."""
    try:
        from settings import load_settings

        return load_settings().default_lang
    except Exception:  # noqa: BLE001 — a bad setting is told after parsing, in this language
        value = os.environ.get("DEFAULT_LANG", "").strip().lower()
        return value if value in ("zh", "en") else "zh"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage dump, in the CLI's language
        from bot.i18n import text

        say = _parse_lang()
        self.exit(2, text(say, "cli.error", message=text(say, "cli.see_help", message=message, prog=self.prog)) + "\n")


def _argv_lang(argv: Sequence[str]) -> str | None:
    """`--lang zh` / `--lang=zh` as typed, read before parsing so that a parse error is said in it
    (None: not given, or not a language)."""
    for i, word in enumerate(argv):
        value = argv[i + 1] if word == "--lang" and i + 1 < len(argv) else word.partition("=")[2]
        if word == "--lang" or word.startswith("--lang="):
            return value if value in ("zh", "en") else None
    return None


@contextmanager
def _argparse_in() -> Iterator[None]:
    """argparse's own error messages (looked up through its module-level gettext `_`) in the
    CLI's language: each message argparse has is an `argparse.*` entry of the English catalogue,
    said from the same entry of that language's; anything else stays as argparse wrote it."""
    from bot.i18n import catalogue

    english: dict[str, str] = {}
    original = argparse._  # type: ignore[attr-defined]

    def said(msgid: str) -> str:
        if not english:
            english.update({m: key for key, m in catalogue("en").items() if key.startswith("argparse.")})
        if msgid not in english:
            return original(msgid)
        return catalogue(_parse_lang())[english[msgid]]

    argparse._ = said  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._ = original  # type: ignore[attr-defined]


class _Version(argparse.Action):
    """`--version`: the installed distribution's version, looked up only when asked."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("digest-bot")
        except PackageNotFoundError:  # a bare checkout on PYTHONPATH, never installed
            found = "unknown (not installed)"
        sys.stdout.write(f"digest-bot {found}\n")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m bot",
        description="Commit digests for Slack, Feishu/Lark and the terminal.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    d = sub.add_parser("digest", help="print or write one repository's digest for a day or range")
    d.add_argument("--repo", required=True, help="owner/name on GitHub, or a local git path")
    d.add_argument(
        "--date",
        help="YYYY-MM-DD, A..B (inclusive), today, yesterday (default), last-week, this-week; "
        "also 今天, 昨天, 前天, 上周, 本周, 2026年1月20日, 1月20日",
    )
    d.add_argument(
        "--range",
        metavar="A..B",
        help="a release range instead of days: the first-parent commits of A..B (tags, branches or SHAs), "
        "as an upgrade report",
    )
    d.add_argument(
        "--release",
        metavar="TAG",
        nargs="?",
        const="",
        help="the range from the tag before TAG to TAG (without TAG: the newest tag)",
    )
    d.add_argument("--tz", help="day boundary time zone (default DEFAULT_TZ, Asia/Shanghai)")
    d.add_argument(
        "--lang",
        choices=("zh", "en"),
        help="output language (default DEFAULT_LANG, zh); also of this command's messages on stderr",
    )
    d.add_argument(
        "--branch",
        nargs="+",
        action="extend",
        metavar="BRANCH",
        default=[],
        help="branches or globs to follow, each commit listed once naming its branches: "
        "--branch main 'release/*' (repeatable; default: the repository's default branch)",
    )
    d.add_argument(
        "--format",
        choices=("markdown", "json", "changelog"),
        default="markdown",
        help="markdown: the report; json: the data; changelog: release notes of the window or range",
    )
    d.add_argument("--out", help="write to this file instead of stdout")
    d.add_argument("--include-merges", action="store_true", help="include merge commits")
    d.add_argument(
        "--paths",
        nargs="+",
        metavar="GLOB",
        default=(),
        help="only commits touching a file matching one of these globs (** crosses directories)",
    )
    d.add_argument(
        "--exclude",
        nargs="+",
        metavar="GLOB",
        default=(),
        help="leave out commits all of whose files match one of these globs",
    )
    d.add_argument(
        "--authors",
        nargs="+",
        metavar="NAME",
        default=(),
        help="only commits by these authors (name or login, any case; quote a name with a space)",
    )
    d.add_argument(
        "--exclude-authors",
        nargs="+",
        metavar="NAME",
        default=(),
        help="leave out commits by these authors (name or login, any case)",
    )
    d.add_argument(
        "--fork",
        metavar="PATH_OR_OWNER/NAME@BRANCH",
        help="also say, for each commit, whether it touches files this fork patches and "
        "whether cherry-picking it onto the fork's branch conflicts",
    )

    a = sub.add_parser("ask", help="ask about one commit, or (without --commit) about a period (streams the answer)")
    a.add_argument("--repo", required=True, help="owner/name on GitHub, or a local git path")
    a.add_argument("--commit", help="full or abbreviated SHA (without it the question is about a period)")
    a.add_argument(
        "--since", help="first day of the period, YYYY-MM-DD (default: from the question's words, else the last 7 days)"
    )
    a.add_argument("--until", help="last day of the period, YYYY-MM-DD (default: today)")
    a.add_argument("--tz", help="day boundary time zone of the period (default DEFAULT_TZ)")
    a.add_argument("--branch", help="branch (default: the repository's default branch)")
    a.add_argument(
        "--lang",
        choices=("zh", "en"),
        help="answer language (default DEFAULT_LANG, zh); also of this command's messages",
    )
    a.add_argument("question", nargs="+", help="the question")

    e = sub.add_parser(
        "eval",
        help="the model report card: the configured LLM and the rule-based analyser "
        "against a maintainer's labelled commits",
    )
    e.add_argument(
        "--labels",
        metavar="FILE",
        help="JSONL of labelled commits (default: tests/data/importance_labels.jsonl "
        "under the current directory, when there)",
    )
    e.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="[OWNER/NAME=]LOCATION",
        help="where a labelled repository's commits are read: a local git path or owner/name on "
        "GitHub (repeatable; without --mirrors only these repositories are scored)",
    )
    e.add_argument(
        "--mirrors", metavar="DIR", help="folder holding OWNER+NAME/repo git mirrors (default $DIGEST_EVAL_MIRRORS)"
    )
    e.add_argument("--limit", type=int, metavar="N", help="score only the first N selected labelled commits")
    e.add_argument("--lang", choices=("zh", "en"), help="analysis and card language (default DEFAULT_LANG)")
    e.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default): the report card to read; json: the same figures as one JSON document, for scripts",
    )

    t = sub.add_parser("profile", help="what a repository's learned profile (its own release notes) knows as of a day")
    t.add_argument("--repo", required=True, help="owner/name on GitHub, or a local git path")
    t.add_argument("--date", help="the day whose profile to show (default today; any digest date form)")
    t.add_argument("--lang", choices=("zh", "en"), help="language (default DEFAULT_LANG)")

    f = sub.add_parser("feedback", help="readers' level corrections: import them from JSONL, or export them")
    fsub = f.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    fi = fsub.add_parser(
        "import",
        help="record the corrections of a JSONL file (repo, sha, level, optional reason, who, at: "
        "the shape of eval --labels)",
    )
    fi.add_argument("file", metavar="FILE.jsonl")
    fi.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="[OWNER/NAME=]PATH",
        help="read the commits of OWNER/NAME from this local clone (repeatable; without it a line's repo "
        "is read from GitHub, or is itself a local path)",
    )
    fi.add_argument(
        "--lang", choices=("zh", "en"), help="language of this command's messages (default DEFAULT_LANG, zh)"
    )
    fx = fsub.add_parser("export", help="write the effective correction of every corrected commit as JSONL")
    fx.add_argument(
        "--repo", action="append", default=[], metavar="OWNER/NAME", help="only this repository's (repeatable)"
    )
    fx.add_argument("--out", metavar="FILE", help="write to this file instead of stdout")
    fx.add_argument(
        "--lang", choices=("zh", "en"), help="language of this command's messages (default DEFAULT_LANG, zh)"
    )

    sub.add_parser(
        "run",
        help="everything in one process: configured chat platforms + scheduler "
        "(the terminal chat when no platform is configured)",
    )
    sub.add_parser("serve", help="HTTP endpoints only: /slack/events, /feishu/events, /healthz")
    sub.add_parser("clock", help="the scheduler only (safe to run more than once)")
    sub.add_parser("worker", help="chat-platform connections without HTTP (Socket Mode / Feishu long connection)")
    sub.add_parser("settings", help="print every effective setting and its source (secrets masked)")
    b = sub.add_parser("backup", help="write what the bot keeps in Redis (no caches) to a file (docs/operations.md)")
    b.add_argument("file", metavar="FILE", help="the backup file to write (- for stdout)")
    b.add_argument("--lang", choices=("zh", "en"), help="language of this command's messages (default DEFAULT_LANG)")
    r = sub.add_parser("restore", help="load a backup file into an empty Redis (REDIS_URL, REDIS_PREFIX)")
    r.add_argument("file", metavar="FILE", help="the backup file to read (- for stdin)")
    r.add_argument(
        "--force",
        action="store_true",
        help="when the Redis already holds the bot's data: delete every key under REDIS_PREFIX (and its "
        "queued jobs) first, then load the file",
    )
    r.add_argument("--lang", choices=("zh", "en"), help="language of this command's messages (default DEFAULT_LANG)")
    h = sub.add_parser("health", help="is a worker / clock alive on this Redis? one line; exit 0 yes, 1 no")
    h.add_argument("kind", choices=("worker", "clock", "platforms"))
    return parser


SWITCH_INTERVAL = 0.001  # seconds (Python's default: 0.005)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    _SAY[0] = _argv_lang(words)
    with _argparse_in():
        args = build_parser().parse_args(words)
    if args.command is None:
        build_parser().print_help()
        return 2
    from bot.core.models import BotError
    from bot.i18n import localize, text
    from settings import ConfigError, load_settings

    # The CLI's own lines (stderr) are in the run's one language: --lang, else DEFAULT_LANG.
    say = vars(args).get("lang") or _SAY[0] or _env_lang()
    try:
        settings = load_settings()
        say = vars(args).get("lang") or settings.default_lang
        logged_to = _configure_logging(settings, args.command)
        # CPU-bound work (prompts, the rules, learning) runs in worker threads; the event loop
        # that acknowledges requests gets the interpreter back within 1 ms of wanting it, not 5.
        sys.setswitchinterval(SWITCH_INTERVAL)
        return asyncio.run(_until_interrupted(_dispatch(args, settings, logged_to)))
    except ConfigError as exc:
        print(text(say, "cli.error", message=localize(exc, say)), file=sys.stderr)
        return 2
    except BotError as exc:
        print(text(say, "cli.error", message=localize(exc, say)), file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, _Interrupted):
        print(text(say, "cli.interrupted"), file=sys.stderr)
        return 130
    except Exception as exc:  # a bug of ours: still one line; the traceback goes to the debug log
        import logging

        logging.getLogger("bot").debug("unexpected failure", exc_info=True)
        print(text(say, "cli.unexpected", kind=type(exc).__name__, message=exc), file=sys.stderr)
        return 1


def _env_lang() -> str:
    """DEFAULT_LANG from the environment when the settings themselves cannot be read; else zh."""
    value = os.environ.get("DEFAULT_LANG", "").strip().lower()
    return value if value in ("zh", "en") else "zh"


class _Interrupted(Exception):
    """Ctrl-C cut the command short (said in one line by main)."""


async def _until_interrupted(work) -> int:
    """`work`, cut short by Ctrl-C at once: the command is cancelled (its cleanup runs) and no log
    line follows — what fails after a Ctrl-C (the embedded Redis the same Ctrl-C stopped, a git
    it interrupted) is no news. `run` and the other processes install their own handler."""
    import logging
    import signal

    task = asyncio.current_task()
    assert task is not None

    def interrupted() -> None:
        logging.disable(logging.CRITICAL)
        task.cancel()

    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, interrupted)
    except (NotImplementedError, RuntimeError):  # no signal handlers here (not the main thread)
        pass
    try:
        return await work
    except asyncio.CancelledError:
        if task.cancelling():  # ours (Ctrl-C), not a cancellation from within the command
            raise _Interrupted() from None
        raise


def _configure_logging(settings: Settings, command: str):
    """Services log at LOG_LEVEL; the one-shot CLI commands keep stderr for their own one-line
    messages unless LOG_LEVEL is set explicitly; `run` holding the terminal chat logs to a file
    under DATA_DIR (CONSOLE_LOGS=file), which it returns (None: stderr)."""
    from bot.core.logs import configure, log_file
    from bot.core.platform_registry import enabled

    level = settings.log_level
    if (
        command in ("digest", "ask", "eval", "feedback", "profile", "settings", "health", "backup", "restore")
        and "log_level" not in settings.model_fields_set
    ):
        # backup and restore run from scripts and cron: their one line says everything
        level = "CRITICAL" if command in ("backup", "restore") else "ERROR"
    chat_here = command == "run" and not enabled(settings)
    to_file = log_file(settings.data_dir) if chat_here and settings.console_logs == "file" else None
    return configure(level, settings.log_format, to_file)


# Commands that read or write the bot's data check its format version first (and migrate it once,
# under a lock, when it is older): `restore` checks the file's version itself; `health` and
# `settings` only look.
CHECKS_DATA = ("digest", "ask", "eval", "profile", "feedback", "backup", "run", "serve", "worker", "clock")


async def _dispatch(args, settings: Settings, logged_to=None) -> int:
    if args.command in CHECKS_DATA:
        from bot.backup.version import check_settings

        await check_settings(settings)
    if args.command == "backup":
        from bot.cli.backup import backup_command

        return await backup_command(args, settings)
    if args.command == "restore":
        from bot.cli.backup import restore_command

        return await restore_command(args, settings)
    if args.command == "health":
        from bot.runtime.health import health_command

        return await health_command(args, settings)
    if args.command == "settings":
        from bot.cli.settings_report import report

        sys.stdout.write(report(settings))
        return 0
    if args.command == "digest":
        from bot.cli.commands import digest_command

        return await digest_command(args, settings)
    if args.command == "ask":
        from bot.cli.commands import ask_command

        return await ask_command(args, settings)
    if args.command == "eval":
        from bot.cli.commands import eval_command

        return await eval_command(args, settings)
    if args.command == "profile":
        from bot.cli.learned_profile import profile_command

        return await profile_command(args, settings)
    if args.command == "feedback":
        from bot.cli.feedback import feedback_command

        return await feedback_command(args, settings)
    from bot.runtime.processes import run_command

    return await run_command(args.command, settings, log_file=logged_to)


if __name__ == "__main__":
    sys.exit(main())
