"""The CLI's `digest`, `ask` and `eval` commands (argparse is in __main__.py): thin wrappers over the core
that print to a terminal. A run speaks one language: the digest and the command's own lines on
stderr are in `--lang`, else DEFAULT_LANG (`stderr_lang`)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from settings import Settings

from ..core.models import UsageError
from ..core.window import parse_window, zone
from ..i18n import Count, echo, phrase, text
from ..period_questions.period import find_period, period_from_flags
from ..runtime.services import Services
from ..sources.branches import bad_pattern, spec_of
from .terminal import ProgressBar, _check_out_path, stderr_lang, write_out

EXIT_NO_LLM = 3  # an LLM is configured but no commit got an LLM analysis (the digest is still written)


async def digest_command(args, settings: Settings) -> int:
    from ..render.changelog import render_changelog
    from ..render.jsonout import render_json
    from ..render.markdown import render_report

    tz = args.tz or settings.default_tz
    zone(tz)
    lang = args.lang or settings.default_lang
    span, release = getattr(args, "range", None), getattr(args, "release", None)
    if sum(x is not None for x in (args.date, span, release)) > 1:
        raise UsageError(phrase("errors.range_and_date"))
    window = (
        None if span or release is not None else parse_window(args.date, tz, datetime.now(UTC), settings.max_range_days)
    )
    filt = _path_filter(args)
    by = _author_filter(args)
    branch = spec_of(getattr(args, "branch", None) or ())  # `--branch main 'release/*'`: one set
    if (bad := bad_pattern(branch)) is not None:
        raise UsageError(phrase("errors.bad_branch", value=bad))
    _check_out_path(args.out)
    fork = None
    if getattr(args, "fork", None):  # named before the (possibly long) analysis: fail fast
        from ..fork import check_fork, cli_usage, read_downstream
        from ..fork.naming import parse_fork

        with cli_usage(lang):
            fork = parse_fork(args.fork, lang, settings)
            await check_fork(fork, settings, lang)
    services = Services.build(settings)
    say = stderr_lang(args, settings)
    bar = ProgressBar(lang=say)
    areas = None
    try:
        source = services.source(args.repo)
        if window is None:  # a range of refs: resolved (or refused in one sentence) before any analysis
            window = await _range_of(source, span, release, tz)
        digest = await services.builder.build(
            source, window, lang, branch, args.include_merges or None, progress=bar, paths=filt, authors=by
        )
        if fork is not None:
            with cli_usage(lang):
                digest = await read_downstream(digest, source, fork, settings, lang)
        if window.is_range and args.format != "changelog":  # the upgrade report groups by area
            from ..digest.rollup import areas_of

            areas = await areas_of(services.builder, source, list(digest.entries))
    finally:
        bar.close()
        await services.aclose(finish_learning=True)  # a one-shot process: the next run starts from it
    if args.format == "json":
        output = render_json([digest], areas)
    elif args.format == "changelog":  # release notes from the same analyses: no further LLM call
        output = render_changelog(digest)
    else:
        output = render_report([digest], areas)
    if not digest.entries:
        print(
            text(say, "cli.no_commits", repo=digest.repo, branch=digest.branch, label=digest.window.label, tz=tz),
            file=sys.stderr,
        )
    if args.out:
        write_out(args.out, output)
        print(
            text(say, "cli.wrote", path=args.out, commits=Count(len(digest.entries), "counts.commit").say(say)),
            file=sys.stderr,
        )
    else:
        sys.stdout.write(output)
    return _say_what_fell_back(digest, settings, say)


async def _range_of(source, span: str | None, release: str | None, tz: str):
    """`--range A..B` or `--release [TAG]` as a Window of refs (bot/sources/refrange.py)."""
    from ..sources.refrange import range_window, release_window

    if span:
        return await range_window(source, span, tz)
    return await release_window(source, release or None, tz)


def _path_filter(args):
    """`--paths` / `--exclude` as a PathFilter; a glob that cannot name a path is bad input."""
    from ..digest.pathfilter import GlobError, PathFilter

    try:
        return PathFilter.of(getattr(args, "paths", ()) or (), getattr(args, "exclude", ()) or ())
    except GlobError as exc:
        raise UsageError(phrase(f"noise.{exc.reason}", **exc.fields)) from None


def _author_filter(args):
    """`--authors` / `--exclude-authors` as an AuthorFilter; a name that cannot be one is bad input."""
    from ..digest.authorfilter import MAX_AUTHORS, AuthorError, AuthorFilter

    authors, exclude = getattr(args, "authors", ()) or (), getattr(args, "exclude_authors", ()) or ()
    for option, names in (("--authors", authors), ("--exclude-authors", exclude)):
        if len(names) > MAX_AUTHORS:
            raise UsageError(phrase("authors.too_many", option=option, limit=MAX_AUTHORS))
    try:
        return AuthorFilter.of(authors, exclude)
    except AuthorError as exc:
        raise UsageError(phrase(f"authors.{exc.reason}", value=echo(exc.name))) from None


def _say_what_fell_back(digest, settings: Settings, lang: str) -> int:
    """One stderr line per kind of trouble; EXIT_NO_LLM when an LLM was configured and not one
    commit got its analysis (a cron job should notice)."""
    from ..digest.notices import cli_summary

    unread = next((e.error for e in digest.entries if e.error), "")
    if unread:
        print(text(lang, "cli.unread", reason=unread), file=sys.stderr)
    if not settings.llm_enabled:
        return 0
    if summary := cli_summary(digest.entries, settings.llm_timeout, lang):
        print(summary, file=sys.stderr)
    if digest.headline_fallback:
        from ..analysis.summary import headline_cli_line

        print(headline_cli_line(digest.headline_fallback, lang), file=sys.stderr)
    if digest.entries and not any(e.analysis and e.analysis.origin == "llm" for e in digest.entries):
        return EXIT_NO_LLM
    return 0


async def ask_command(args, settings: Settings) -> int:
    from ..answers.question import check_question

    lang = args.lang or settings.default_lang
    question = check_question(" ".join(args.question), lang)
    if not args.commit:
        return await ask_history(args, settings, question, lang)
    if args.since or args.until:
        from ..i18n import phrase

        raise UsageError(phrase("history.commit_and_period"))
    services = Services.build(settings)
    try:
        source = services.source(args.repo)
        commit = await source.get_commit(args.commit)
        async for piece in services.qa.answer(source, commit, question, lang):
            sys.stdout.write(piece)
            sys.stdout.flush()
        sys.stdout.write("\n")
    finally:
        await services.aclose(finish_learning=True)  # a one-shot process: the next run starts from it
    return 0


async def eval_command(args, settings: Settings) -> int:
    """The model report card (bot/evaluation/card.py), in `--lang` else DEFAULT_LANG like a digest; bad
    input is one sentence and exit 2 before any analysis; EXIT_NO_LLM when an LLM is configured and
    none of its answers passed the checks."""
    from ..evaluation.card import build_card, labels_path, load_labels, mirrors_dir, plan_sources, read_cases
    from ..evaluation.card_text import render_card_json, render_card_text

    lang = args.lang or settings.default_lang
    say = stderr_lang(args, settings)
    if args.limit is not None and args.limit < 1:
        raise UsageError(phrase("eval.bad_limit", value=args.limit))
    path = labels_path(args.labels)
    labels = load_labels(path)
    sources, left_out = plan_sources(labels, args.repo, mirrors_dir(args.mirrors))
    for repo, commits in left_out.items():
        print(text(say, "eval.left_out", repo=repo, commits=commits), file=sys.stderr)
    selected = [label for label in labels if label.repo in sources][: args.limit]
    cases = await read_cases(selected, sources, settings)
    if not settings.llm_enabled:
        print(text(say, "eval.no_llm"), file=sys.stderr)
    bar = ProgressBar(lang=say)
    try:
        card = await build_card(cases, settings, lang, str(path), left_out, progress=bar)
    finally:
        bar.close()
    sys.stdout.write(render_card_json(card) if args.format == "json" else render_card_text(card))
    if card.llm is not None and card.commits and not card.llm.accepted:
        print(text(say, "eval.none_accepted", commits=card.commits), file=sys.stderr)
        return EXIT_NO_LLM
    return 0


# `python -m bot ask --repo R [--since A] [--until B] [--tz Z] "question"`: a question about a
# period, streamed to the terminal (the period from the flags, else from the question's words).
async def ask_history(args, settings: Settings, question: str, lang: str) -> int:
    tz = args.tz or settings.default_tz
    zone(tz)
    now = datetime.now(UTC)
    if args.since or args.until:
        window = period_from_flags(args.since, args.until, tz, now, settings.max_range_days)
        search = question
    else:
        period = find_period(question, tz, now, settings.max_range_days)
        window, search = period.window, period.question
    services = Services.build(settings)
    bar = ProgressBar(lang=lang)
    cleared = False
    try:
        source = services.source(args.repo)
        assert services.history is not None  # Services.build always builds it
        async for piece in services.history.answer(
            source, window, question, lang, branch=args.branch, search=search, progress=bar
        ):
            if not cleared:  # the progress line gives way to the answer
                bar.close()
                cleared = True
            sys.stdout.write(piece)
            sys.stdout.flush()
        sys.stdout.write("\n")
    finally:
        if not cleared:
            bar.close()
        await services.aclose(finish_learning=True)  # a one-shot process: the next run starts from it
    return 0
