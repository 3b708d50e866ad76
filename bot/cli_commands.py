"""The `digest` and `ask` CLI commands: thin wrappers over the core that print to a terminal."""
from __future__ import annotations

import os
import sys
from datetime import datetime, timezone

from .models import UsageError
from .services import Services
from .window import parse_window, zone

EXIT_NO_LLM = 3  # an LLM is configured but no commit got an LLM analysis (the digest is still written)


class ProgressBar:
    """`analysing 12/31 [######....]` on stderr — only on a terminal, so pipes and CI stay clean."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.enabled = stream.isatty()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        width = 30
        filled = int(width * done / total)
        self.stream.write(f"\ranalysing {done}/{total} [{'#' * filled}{'.' * (width - filled)}]")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _check_out_path(path: str | None) -> None:
    """Fail before the (possibly long) analysis, not after it."""
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"Cannot write {path}: the folder {folder} does not exist.")
    if os.path.isdir(path):
        raise UsageError(f"Cannot write {path}: it is a folder.")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"Cannot write {path}: no permission to write in {folder}.")


async def digest_command(args, settings) -> int:
    from .render.jsonout import render_json
    from .render.markdown import render_report

    tz = args.tz or settings.default_tz
    zone(tz)
    lang = args.lang or settings.default_lang
    window = parse_window(args.date, tz, datetime.now(timezone.utc), settings.max_range_days)
    _check_out_path(args.out)
    services = Services.build(settings)
    bar = ProgressBar()
    try:
        source = services.source(args.repo)
        digest = await services.builder.build(source, window, lang, args.branch, args.include_merges or None,
                                              progress=bar)
    finally:
        bar.close()
        await services.aclose()
    text = render_json([digest]) if args.format == "json" else render_report([digest])
    if not digest.entries:
        print(f"No commits in {digest.repo} ({digest.branch}) on {window.label} ({tz}).", file=sys.stderr)
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise UsageError(f"Cannot write {args.out}: {exc.strerror}.") from None
        print(f"wrote {args.out} ({len(digest.entries)} commits)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return _say_what_fell_back(digest, settings)


def _say_what_fell_back(digest, settings) -> int:
    """One stderr line per kind of trouble; EXIT_NO_LLM when an LLM was configured and not one
    commit got its analysis (a cron job should notice)."""
    from .notices import cli_summary

    unread = next((e.error for e in digest.entries if e.error), "")
    if unread:
        print(f"Some commits could not be read: {unread}", file=sys.stderr)
    if not settings.llm_enabled:
        return 0
    if summary := cli_summary(digest.entries, settings.llm_timeout):
        print(summary, file=sys.stderr)
    if digest.entries and not any(e.analysis and e.analysis.origin == "llm" for e in digest.entries):
        return EXIT_NO_LLM
    return 0


async def ask_command(args, settings) -> int:
    from .qa import check_question

    lang = args.lang or settings.default_lang
    question = check_question(" ".join(args.question), lang)
    if not args.commit:
        from .history.cli import ask_history
        return await ask_history(args, settings, question, lang)
    if args.since or args.until:
        from .i18n import text
        raise UsageError(text(lang, "history.commit_and_period"))
    services = Services.build(settings)
    try:
        source = services.source(args.repo)
        commit = await source.get_commit(args.commit)
        async for piece in services.qa.answer(source, commit, question, lang):
            sys.stdout.write(piece)
            sys.stdout.flush()
        sys.stdout.write("\n")
    finally:
        await services.aclose()
    return 0
