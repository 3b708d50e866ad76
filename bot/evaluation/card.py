"""The model report card: the configured LLM and the rule-based analyser against a maintainer's labels.

A labels file is JSONL, one labelled commit a line: `{"repo": "owner/name", "sha": "…", "level":
"high|medium|low", "type": "…", "reason": "…"}` (type and reason optional). Only labels live in it:
the commits are read at run time from where the operator says — `--repo owner/name=PATH` (or a bare
local PATH when it holds the only labelled repository, or `owner/name` to read it from GitHub),
and `--mirrors DIR` / $DIGEST_EVAL_MIRRORS holding `DIR/<owner>+<name>/repo` git mirrors. There is
no machine default: a labelled repository with no place to read it from is bad input (exit 2),
unless `--repo` named others and no mirrors were given — then only the named ones are scored and
one line says what was left out.

Each commit goes through the bot's own analysis path twice: the `Analyzer` with the configured
endpoint (validation, one corrective retry, fallback — exactly as a digest) and without it (the
rule-based analyser). The LLM column is scored on the answers that passed the checks (a fallback is
the rule-based analysis, not the model's judgement), next to the rule-based analyser on the same
commits; the accepted share, the fallbacks' reasons, tokens (the endpoint's `usage`), LLM calls and
wall time say what the judgement cost.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from settings import Settings

from ..core import metrics
from ..core.models import Analysis, BotError, Commit, FileChange, Judgement, NotFoundError, UsageError
from ..i18n import phrase
from ..taste.scores import LEVELS, Scores, score

if TYPE_CHECKING:
    from ..analysis.repo_config import RepoProfile
    from ..sources import CommitSource

DEFAULT_LABELS = Path("tests") / "data" / "importance_labels.jsonl"  # relative to the current directory
MIRRORS_ENV = "DIGEST_EVAL_MIRRORS"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Label:
    repo: str
    sha: str
    level: str
    line: int  # in the labels file, for messages
    type: str = ""  # the change type the maintainer gave (bench/eval_importance.py compares it)
    reason: str = ""


@dataclass
class Case:
    """One labelled commit, read from its repository, ready to analyse."""

    label: Label
    commit: Commit
    files: Sequence[FileChange]
    pr_body: str | None
    reverted: Commit | None
    profile: RepoProfile | None
    judgement: Judgement | None = None  # the repository's learned profile as of the commit's week


# --- the labels -------------------------------------------------------------------------------------


def labels_path(given: str | None) -> Path:
    """`--labels`, else the project's own labels when run from its source tree."""
    if given:
        return Path(given)
    if DEFAULT_LABELS.is_file():
        return DEFAULT_LABELS
    raise UsageError(phrase("eval.no_labels", default=str(DEFAULT_LABELS)))


def load_labels(path: Path) -> list[Label]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(phrase("eval.labels_missing", path=path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            phrase("eval.labels_unreadable", path=path, reason=getattr(exc, "strerror", None) or type(exc).__name__)
        ) from None
    labels = []
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if not (
            isinstance(item, dict)
            and isinstance(item.get("repo"), str)
            and "/" in item["repo"]
            and isinstance(item.get("sha"), str)
            and item["sha"].strip()
            and item.get("level") in LEVELS
        ):
            raise UsageError(phrase("eval.bad_line", line=number, path=path))
        labels.append(
            Label(
                item["repo"].strip(),
                item["sha"].strip(),
                item["level"],
                number,
                str(item.get("type") or ""),
                str(item.get("reason") or ""),
            )
        )
    if not labels:
        raise UsageError(phrase("eval.no_commits", path=path))
    return labels


# --- where the commits are read ---------------------------------------------------------------------


def mirror_path(mirrors: Path, repo: str) -> Path | None:
    """`mirrors/<owner>+<name>/repo` (a bare mirror) or `mirrors/<owner>+<name>`, if it is a git repository."""
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    return None


def mirrors_dir(given: str | None) -> Path | None:
    value = given or os.environ.get(MIRRORS_ENV, "")
    return Path(value).expanduser() if value.strip() else None


def plan_sources(
    labels: Sequence[Label], repo_args: Sequence[str], mirrors: Path | None
) -> tuple[dict[str, str], dict[str, int]]:
    """(labelled repo → where to read it, labelled repo → commits left out). Bad input raises
    UsageError before any commit is read."""
    counts = Counter(label.repo for label in labels)
    chosen: dict[str, str] = {}
    for spec in repo_args:
        name, location = _repo_arg(spec, counts)
        chosen[name] = location
    if mirrors is not None and not mirrors.is_dir():
        raise UsageError(phrase("eval.mirrors_missing", path=mirrors))
    left_out: dict[str, int] = {}
    for repo in counts:
        if repo in chosen:
            continue
        if mirrors is not None:
            found = mirror_path(mirrors, repo)
            if found is None:
                raise UsageError(phrase("eval.no_mirror", repo=repo, path=mirrors))
            chosen[repo] = str(found)
        elif repo_args:
            left_out[repo] = counts[repo]
        else:
            raise UsageError(phrase("eval.no_source", repo=repo, env=MIRRORS_ENV))
    return chosen, left_out


def _repo_arg(spec: str, labelled: Counter) -> tuple[str, str]:
    # `NAME=LOCATION`: a labelled repository (as its labels name it: owner/name, gitlab:group/project …)
    # read from elsewhere; a bare name is read where the source registry says (bot/sources/registry.py)
    name, sep, location = spec.partition("=")
    if sep and name.strip() and not os.path.exists(os.path.expanduser(spec)):
        name, location = name.strip(), location.strip()
    else:
        location = spec.strip()
        if os.path.exists(os.path.expanduser(location)):
            name = _local_identity(location, labelled)
        else:
            name = location  # a remote repository's name: read from its host
    if name not in labelled:
        raise UsageError(phrase("eval.repo_not_labelled", repo=name, labelled=", ".join(labelled)))
    return name, location


def _local_identity(location: str, labelled: Counter) -> str:
    """Which labelled repository a bare local path holds: its `origin`, else the only one."""
    from ..sources.localgit import LocalGitSource

    identity = LocalGitSource(os.path.expanduser(location)).name
    if identity in labelled:
        return identity
    if len(labelled) == 1:
        return next(iter(labelled))
    raise UsageError(phrase("eval.repo_ambiguous", path=location, example=next(iter(labelled))))


async def read_cases(
    labels: Sequence[Label], sources: dict[str, str], settings: Settings, learn: bool | None = None
) -> list[Case]:
    """Every selected labelled commit with its files, PR text and reverted commit, as a digest reads them,
    and the learned profile's judgement when `learn` (default: the settings' LEARN_FROM_RELEASE_NOTES)."""
    from ..analysis.repo_config import load_profile
    from ..sources.opened import open_source

    opened: dict[str, tuple[CommitSource, RepoProfile | None]] = {}
    cases = []
    taste = None
    if learn is None:
        learn = settings is not None and settings.learn_from_release_notes
    if learn:
        from ..taste.book import TasteBook

        limit = settings.learn_history_commits if settings is not None else 2000
        taste = TasteBook(None, history_limit=limit)  # in memory: nothing to keep
    for label in labels:
        if label.repo not in sources:
            continue
        if label.repo not in opened:
            source = open_source(sources[label.repo], settings)
            opened[label.repo] = (source, (await load_profile(source))[0])
        source, profile = opened[label.repo]
        try:
            commit = await source.get_commit(label.sha)
        except (NotFoundError, UsageError):
            raise UsageError(
                phrase(
                    "eval.commit_missing", line=label.line, sha=label.sha, repo=label.repo, location=sources[label.repo]
                )
            ) from None
        files = await source.get_files(commit.sha)
        pr_body = await _quiet(source.pr_description(commit.pr_number)) if commit.pr_number else None
        reverted = await _quiet(source.get_commit(commit.reverts)) if commit.reverts else None
        judgement = await taste.judge(source, commit, files) if taste is not None else None
        cases.append(Case(label, commit, files, pr_body, reverted, profile, judgement))
    for source, _ in opened.values():
        if close := getattr(source, "close", None):
            close()
    return cases


async def _quiet(awaitable):
    try:
        return await awaitable
    except BotError:
        return None  # context only, as in a digest: the analysis goes on without it


# --- the two passes -----------------------------------------------------------------------------------


@dataclass
class Pass:
    analyses: list[Analysis]
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0  # LLM.complete calls: a corrective retry is one more; HTTP retries inside a call are not


async def analyse_cases(
    analyzer, cases: Sequence[Case], lang: str, progress: Progress | None = None, learned: bool = True
) -> Pass:
    """Every case through `analyzer`, concurrently (the LLM bounds its own requests by
    LLM_CONCURRENCY), with the endpoint's reported usage over the pass; `learned=False` leaves
    the repositories' learned profiles out (the rules alone)."""
    before = _usage()
    done = 0

    async def one(case: Case) -> Analysis:
        nonlocal done
        judgement = case.judgement if learned else None
        try:
            result = await analyzer.analyse(
                case.commit,
                case.files,
                lang,
                pr_body=case.pr_body,
                reverted=case.reverted,
                profile=case.profile,
                judgement=judgement,
            )
        except BotError as exc:  # as a digest does: the commit keeps a (marked) offline analysis
            from ..analysis.offline import analyse_offline

            offline = analyse_offline(
                case.commit,
                case.files,
                lang,
                origin="fallback",
                note=str(exc),
                profile=case.profile,
                judgement=judgement,
            )
            result = replace(offline, fallback_reason=type(exc).__name__)
        done += 1
        if progress:
            progress(done, len(cases))
        return result

    started = time.monotonic()
    analyses = list(await asyncio.gather(*(one(c) for c in cases)))
    seconds = time.monotonic() - started
    after = _usage()
    prompt, completion, calls = (b - a for a, b in zip(before, after))
    return Pass(analyses, seconds, int(prompt), int(completion), int(calls))


def _usage() -> tuple[float, float, float]:
    return (
        metrics.total("llm_tokens", direction="in"),
        metrics.total("llm_tokens", direction="out"),
        metrics.total("llm_calls", purpose="complete", outcome="ok")
        + metrics.total("llm_calls", purpose="complete", outcome="error"),
    )


# --- the card -------------------------------------------------------------------------------------------


@dataclass
class LLMColumn:
    model: str
    endpoint: str
    accepted: int
    fallbacks: dict[str, int]  # reason → commits
    scores: Scores  # on the accepted answers
    rules_same: Scores  # the rule-based analyser on the same commits
    run: Pass


@dataclass
class Card:
    labels: str
    lang: str
    commits: int
    repos: dict[str, int]
    left_out: dict[str, int]
    rules: Scores
    rules_seconds: float
    learned: Scores | None = None  # the offline analyser as digests use it: rules + learned profile
    llm: LLMColumn | None = None
    schema: str = field(default="digest-bot/eval-card@1")

    def as_dict(self) -> dict:
        data = {
            "schema": self.schema,
            "labels": self.labels,
            "lang": self.lang,
            "commits": self.commits,
            "repos": self.repos,
            "left_out": self.left_out,
            "rules": {**self.rules.as_dict(), "seconds": round(self.rules_seconds, 3)},
            "learned": self.learned.as_dict() if self.learned is not None else None,
            "llm": None,
        }
        if self.llm is not None:
            c = self.llm
            data["llm"] = {
                "model": c.model,
                "endpoint": c.endpoint,
                "accepted": c.accepted,
                "accepted_rate": round(c.accepted / self.commits, 4) if self.commits else None,
                "fallbacks": c.fallbacks,
                "scores": c.scores.as_dict(),
                "rules_same_commits": c.rules_same.as_dict(),
                "prompt_tokens": c.run.prompt_tokens,
                "completion_tokens": c.run.completion_tokens,
                "calls": c.run.calls,
                "seconds": round(c.run.seconds, 3),
            }
        return data


async def build_card(
    cases: Sequence[Case],
    settings: Settings,
    lang: str,
    labels: str,
    left_out: dict[str, int],
    progress: Progress | None = None,
) -> Card:
    from ..analysis.analyze import Analyzer
    from ..core.prompts import Prompts

    prompts = Prompts(settings.prompts_dir)
    levels = [c.label.level for c in cases]
    rules = await analyse_cases(Analyzer(None, prompts, settings), cases, lang, learned=False)
    rule_levels = [a.importance.value for a in rules.analyses]
    learned = None
    if any(c.judgement is not None for c in cases):
        run = await analyse_cases(Analyzer(None, prompts, settings), cases, lang)
        learned = score(list(zip(levels, (a.importance.value for a in run.analyses))))
    card = Card(
        labels=labels,
        lang=lang,
        commits=len(cases),
        repos=dict(Counter(c.label.repo for c in cases)),
        left_out=left_out,
        rules=score(list(zip(levels, rule_levels))),
        rules_seconds=rules.seconds,
        learned=learned,
    )
    if not settings.llm_enabled:
        return card
    from ..analysis.llm.client import LLM

    llm = LLM(settings)
    try:
        run = await analyse_cases(Analyzer(llm, prompts, settings), cases, lang, progress)
    finally:
        await llm.aclose()
    accepted = [i for i, a in enumerate(run.analyses) if a.origin == "llm"]
    fallbacks = Counter(a.fallback_reason or "other" for a in run.analyses if a.origin != "llm")
    card.llm = LLMColumn(
        model=settings.llm_model,
        endpoint=_host(settings.openai_base_url),
        accepted=len(accepted),
        fallbacks=dict(fallbacks.most_common()),
        scores=score([(levels[i], run.analyses[i].importance.value) for i in accepted]),
        rules_same=score([(levels[i], rule_levels[i]) for i in accepted]),
        run=run,
    )
    return card


def _host(base_url: str | None) -> str:
    """host[:port] only: never a user, password, path or query."""
    parts = urlsplit(base_url or "https://api.openai.com/v1")
    host = parts.hostname or "?"
    return f"{host}:{parts.port}" if parts.port else host
