"""Ask the history, measured: labelled questions about periods of a real repository.

  python bench/eval_history.py --mirror DIR [--labels FILE] [--split heldout|tune|all]
                               [--tune] [--llm URL --model NAME [--limit N] [--only-llm]]
                               [--no-timing | --only-timing] [--show]

`tests/data/history_questions_ruff.jsonl` holds 37 questions about April 2026 (UTC) of
astral-sh/ruff, labelled the same way and committed before the retriever first ran on them; the
column weights are tuned on its odd ids (`--labels FILE --tune`), and the uv set below is not
tuned on any more. `tests/data/history_questions.jsonl` holds 60 questions about three months
(2026-03-01..05-31, UTC) of astral-sh/uv, each with its period and the commits a maintainer would cite, written from
`git log` (titles, and `git show --stat` where a title was unclear) before the bot's retrieval was
first run on them. Odd ids are the tuning half (the BM25 column weights and the relevance cutoff
were chosen on them), even ids the held-out half.

The repository is read at run time from a bare mirror (`--mirror DIR`, or $DIGEST_EVAL_UV_MIRROR)
through the bot's own local git source; without one the script says so and exits 0.

Printed, per half — the default path: every commit indexed from its own text and touched paths,
no analysis cached, none made (the offline rules give only type and importance):
  recall@10   the share of a question's labelled commits among the 10 retrieved (mean over questions)
  precision   of the cited sources: offline, the Sources list the answer is (after the relevance
              cutoff); with `--llm URL`, the SHAs the model's answer cites that survive the check
              against its sources (invented ones are counted apart)
  time to the first streamed chunk (p50/p95), through the fake LLM endpoint (tests/fakes): cold
  (nothing analysed or indexed, in a fresh store) and warm (indexed, the answers' analyses cached);
  LLM calls per question, cold, counted at the fake endpoint (max and mean, against the bound
  HISTORY_MAX_ANALYSES + 2: the analyses, the answer and one corrective retry).
`--tune` searches the weights and cutoff on the tuning half and prints the best.

`--paired` (with `--labels tests/data/history_questions_ruff_zh.jsonl`,
`tests/data/history_questions_pytest_zh.jsonl` or `tests/data/history_questions_pip_zh.jsonl`,
whose rows carry the English question they translate as `en`): recall@10 of each question in
Chinese and in English, per half, and the difference. The ruff zh set was split by id before its
first run (odd ids tuned the zh→en glossary, bot/core/glossary.py; even ids were held out, then
spent: the general words added after that run make them in-sample); the pytest zh set
(pytest-dev/pytest, 2026-04..06) was labelled after the glossary was closed and is all held out, and
so was the pip zh set (pypa/pip, 25 questions about 2026-01, 2026-03 and 2026-04, committed before
its one run). `--split tune` runs the tuning half only.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.period_questions import Trace  # noqa: E402
from bot.period_questions import index as index_module  # noqa: E402
from bot.period_questions import retrieve as retrieve_module  # noqa: E402
from bot.period_questions.period import period_from_flags  # noqa: E402
from bot.period_questions.terms import build_query  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from settings import Settings  # noqa: E402

DEFAULT_LABELS = ROOT / "tests" / "data" / "history_questions.jsonl"
K = 10


def load(path: Path, split: str) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if split == "all" or r["split"] == split]


def window_of(q: dict):
    until = datetime.fromisoformat(q["until"]).replace(tzinfo=UTC) + timedelta(days=1)
    return period_from_flags(q["since"], q["until"], q["tz"], until, max_days=366)


def settings_for(data_dir: str, tag: str, **extra) -> Settings:
    return Settings(
        _env_file=None,
        data_dir=Path(data_dir),
        redis_prefix=f"eval-history-{tag}-{time.time_ns()}:",
        analysis_concurrency=8,
        **extra,
    )


def matches(labels: list[str], sha: str) -> bool:
    return any(sha.startswith(label) for label in labels)


async def retrieval_rows(services, mirror: str, questions: list[dict], weights, cutoff) -> list[dict]:
    """For each question: the top K retrieved (no cutoff) and the Sources list (with it)."""
    source = services.source(mirror)
    retriever = services.history.retriever
    out = []
    for q in questions:
        window = window_of(q)
        commits = await retriever.commits(source, window)
        await retriever.prepare(source, commits, q["lang"])
        query = build_query(q["question"])
        top = await _search(retriever, source, commits, window, q["lang"], query, weights, 0.0)
        listed = top if query.empty or not top else [s for s in top if s.score >= cutoff * top[0].score]
        out.append(
            {
                "q": q,
                "commits": len(commits),
                "top": [s.sha for s in top],
                "listed": [s.sha for s in listed],
                "titles": {s.sha: s.title for s in top},
            }
        )
    return out


async def _search(retriever, source, commits, window, lang, query, weights, cutoff):
    if query.empty:
        return await retriever.search(source, commits, window, lang, query, K, cutoff)
    between = (window.start_utc.timestamp(), window.end_utc.timestamp())
    hits = await retriever.index.search(
        source.cache_id, lang, query.fts(), [c.sha for c in commits], K, between, weights
    )
    return [retrieve_module._source(h) for h in hits]


def recall_precision(rows: list[dict], cutoff: float | None = None) -> tuple[float, float, int, int]:
    """(mean recall@K, micro precision of the listed sources, sources listed, questions with none)."""
    recalls, right, listed, empty = [], 0, 0, 0
    for row in rows:
        labels = row["q"]["cite"]
        recalls.append(sum(1 for label in labels if any(s.startswith(label) for s in row["top"])) / len(labels))
        chosen = row["listed"] if cutoff is None else _cut(row, cutoff)
        if not chosen:
            empty += 1
        listed += len(chosen)
        right += sum(1 for sha in chosen if matches(labels, sha))
    return statistics.mean(recalls), (right / listed if listed else float("nan")), listed, empty


def _cut(row: dict, cutoff: float) -> list[str]:
    scores = row.get("scores") or {}
    if not row["top"] or not scores:
        return row["top"]
    best = scores[row["top"][0]]
    return [s for s in row["top"] if scores[s] >= cutoff * best]


async def paired(args, mirror: str) -> None:
    """recall@10 of the same questions in Chinese and in English, per half."""
    chinese = [q for q in load(Path(args.labels), args.split) if q.get("en")]
    english = [{**q, "lang": "en", "question": q["en"]} for q in chinese]
    with tempfile.TemporaryDirectory() as data_dir:
        services = Services.build(settings_for(data_dir, "paired"))
        try:
            weights, cutoff = index_module.WEIGHTS, retrieve_module.LIST_CUTOFF
            zh_rows = await retrieval_rows(services, mirror, chinese, weights, cutoff)
            en_rows = await retrieval_rows(services, mirror, english, weights, cutoff)
        finally:
            await services.aclose()
    print(f"{len(chinese)} questions of {Path(args.labels).name}, each in Chinese and in English (no analysis)")
    for split in ("tune", "heldout"):
        zh = [r for r in zh_rows if r["q"]["split"] == split]
        en = [r for r in en_rows if r["q"]["split"] == split]
        if not zh:
            continue
        zh_recall, en_recall = recall_precision(zh)[0], recall_precision(en)[0]
        name = "tuning half (in-sample)" if split == "tune" else "held out"
        print(
            f"  {name}: {len(zh)} questions — recall@{K} zh {zh_recall:.3f}, en {en_recall:.3f} "
            f"(zh − en {zh_recall - en_recall:+.3f}); 'nothing matches' zh {sum(1 for r in zh if not r['top'])}, "
            f"en {sum(1 for r in en if not r['top'])}"
        )
    if args.show:
        for z, e in zip(zh_rows, en_rows, strict=True):
            labels = z["q"]["cite"]
            got = [sum(1 for label in labels if any(s.startswith(label) for s in r["top"])) for r in (z, e)]
            print(
                f"#{z['q']['id']} {z['q']['question']} / {e['q']['question']}: zh {got[0]}, en {got[1]} of {len(labels)}"
            )
            if args.show_query:
                print(f"    {build_query(z['q']['question'])}")


async def evaluate(args, mirror: str) -> None:
    if args.paired:
        return await paired(args, mirror)
    questions = load(Path(args.labels), "all")
    if args.only_timing:
        return await timing(args, mirror, questions)
    if args.llm and args.only_llm:
        chosen = [q for q in questions if args.split == "all" or q["split"] == args.split]
        return await real_llm(args, mirror, chosen[: args.limit or None])
    with tempfile.TemporaryDirectory() as data_dir:
        services = Services.build(settings_for(data_dir, "offline"))
        try:
            if args.tune:
                await tune(services, mirror, [q for q in questions if q["split"] == "tune"])
                return
            started = time.monotonic()
            rows = await retrieval_rows(services, mirror, questions, index_module.WEIGHTS, retrieve_module.LIST_CUTOFF)
            print(
                f"{len(questions)} questions of {Path(args.labels).name}; no analysis (commit text and paths); "
                f"{time.monotonic() - started:.0f} s to index and retrieve"
            )
            for split in ("tune", "heldout"):
                part = [r for r in rows if r["q"]["split"] == split]
                recall, precision, listed, empty = recall_precision(part)
                found = sum(sum(1 for s in r["listed"] if matches(r["q"]["cite"], s)) for r in part)
                list_recall = found / sum(len(r["q"]["cite"]) for r in part)
                name = "odd ids (the tuning half where tuned on)" if split == "tune" else "even ids (held out)"
                print(
                    f"  {name}: {len(part)} questions — recall@{K} {recall:.3f}; precision of the Sources "
                    f"list {precision:.3f} ({listed} listed, {listed / len(part):.1f} per answer; it holds "
                    f"{list_recall:.3f} of the labelled commits); {empty} answered 'nothing matches'"
                )
            for lang in ("zh",):
                part = [r for r in rows if r["q"]["lang"] == lang]
                recall, precision, listed, _ = recall_precision(part)
                print(
                    f"  Chinese questions (both halves): {len(part)} — recall@{K} {recall:.3f}; precision {precision:.3f}"
                )
            if args.show:
                show(rows, args.split)
        finally:
            await services.aclose()
    if args.llm:
        chosen = [q for q in questions if args.split == "all" or q["split"] == args.split]
        await real_llm(args, mirror, chosen[: args.limit or None])
    if not args.no_timing:
        await timing(args, mirror, questions)


def show(rows: list[dict], split: str) -> None:
    for row in rows:
        q = row["q"]
        if split != "all" and q["split"] != split:
            continue
        labels = q["cite"]
        missed = [label for label in labels if not any(s.startswith(label) for s in row["top"])]
        wrong = [s[:10] for s in row["listed"] if not matches(labels, s)]
        print(f"#{q['id']} {q['since']}..{q['until']} {q['question']} ({row['commits']} commits)")
        print(
            f"    missed {missed}  listed-but-not-labelled {[(s, row['titles'][next(t for t in row['titles'] if t.startswith(s))][:50]) for s in wrong]}"
        )


async def tune(services, mirror: str, questions: list[dict]) -> None:
    """Grid over column weights and the cutoff, on the tuning half only."""
    source = services.source(mirror)
    retriever = services.history.retriever
    prepared = []
    for q in questions:
        window = window_of(q)
        commits = await retriever.commits(source, window)
        await retriever.prepare(source, commits, q["lang"])
        prepared.append((q, window, commits, build_query(q["question"])))
    # No analyses on this path: the summary column is empty and its weight does not matter.
    grid = {
        "title": (4.0, 8.0, 12.0),
        "symbols": (1.0, 2.0),
        "paths": (0.5, 1.5, 3.0),
        "parts": (1.0, 2.0, 4.0, 8.0),
        "summary": (2.0,),
        "body": (0.25, 0.5, 1.0),
        "cjk": (1.0,),
    }
    results = []
    for weights in itertools.product(*grid.values()):
        rows = []
        for q, window, commits, query in prepared:
            top = await _search(retriever, source, commits, window, q["lang"], query, weights, 0.0)
            rows.append({"q": q, "top": [s.sha for s in top], "listed": [], "scores": {s.sha: s.score for s in top}})
        results.append((recall_precision(rows, 0.0)[0], ndcg(rows), weights, rows))
    results.sort(key=lambda r: (-r[0], -r[1]))
    print(
        "column weights (title, symbols, paths, parts, summary, body, cjk), best on the tuning half by recall@10, then nDCG@10:"
    )
    for recall, gain, weights, _ in results[:5]:
        print(f"  {weights}: recall@10 {recall:.3f} nDCG@10 {gain:.3f}")
    rows = results[0][3]
    print(f"relevance cutoff for the Sources list, with {results[0][2]}:")
    for cutoff in (0.0, 0.2, 0.35, 0.5, 0.6, 0.7, 0.8):
        _, precision, listed, _ = recall_precision(rows, cutoff)
        found = sum(sum(1 for s in _cut(r, cutoff) if matches(r["q"]["cite"], s)) for r in rows)
        recall = found / sum(len(r["q"]["cite"]) for r in rows)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        print(f"  {cutoff}: precision {precision:.3f} recall of the list {recall:.3f} F1 {f1:.3f} ({listed} listed)")


def ndcg(rows: list[dict]) -> float:
    import math

    total = 0.0
    for row in rows:
        labels = row["q"]["cite"]
        gain = sum(1 / math.log2(i + 2) for i, sha in enumerate(row["top"]) if matches(labels, sha))
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(labels), K)))
        total += gain / ideal
    return total / len(rows)


async def real_llm(args, mirror: str, questions: list[dict]) -> None:
    """Answers by a real endpoint: the precision of the SHAs its answers cite (after the check)."""
    from bot.analysis.llm import LLM
    from bot.period_questions import HistoryQA

    with tempfile.TemporaryDirectory() as data_dir:
        services = Services.build(settings_for(data_dir, "llm"))
        llm_settings = settings_for(
            data_dir,
            "llm",
            openai_base_url=args.llm,
            openai_api_key="bench-key-eval",
            llm_model=args.model,
            llm_timeout=900,
            llm_max_retries=0,
            llm_context_tokens=args.context,
        )
        # The analyses stay the offline analyser's (a small model's are no better and take minutes a
        # commit on two cores): only the answers are the model's.
        llm = LLM(llm_settings)
        history = HistoryQA(services.history.retriever, llm, services.prompts, llm_settings)
        right = cited = refused = answered = 0
        try:
            source = services.source(mirror)
            for q in questions:
                trace = Trace()
                started = time.monotonic()
                text = "".join(
                    [p async for p in history.answer(source, window_of(q), q["question"], q["lang"], trace=trace)]
                )
                answered += 1
                right += sum(1 for sha in trace.cited if matches(q["cite"], sha))
                cited += len(trace.cited)
                refused += len(trace.refused)
                print(
                    f"  #{q['id']}: cited {len(trace.cited)} ({sum(1 for s in trace.cited if matches(q['cite'], s))} "
                    f"labelled), refused {len(trace.refused)}, {time.monotonic() - started:.0f} s",
                    flush=True,
                )
                if args.show:
                    print("    " + text.replace("\n", "\n    ")[:1500])
        finally:
            await llm.aclose()
            await services.aclose()
    print(
        f"real LLM {args.model} ({args.split}): {answered} answers; precision of cited sources "
        f"{right}/{cited} = {right / cited if cited else float('nan'):.3f}; {refused} SHA-like words "
        "that named no source replaced"
    )


def _citing_responder(request: dict):
    """A fake model that cites the first two commits it was given, and one SHA it was not."""
    from tests.fakes.openai_server import Reply, default_responder

    if not request.get("stream"):
        return default_responder(request)
    user = request["messages"][-1]["content"]
    shas = re.findall(r"^\[([0-9a-f]{7})\]", user, re.M)[:2]
    body = " ".join(f"A change [{sha}]." for sha in shas) + " Also [abc1234f]."
    return Reply(content=body, chunks=[body[i : i + 12] for i in range(0, len(body), 12)])


async def timing(args, mirror: str, questions: list[dict]) -> None:
    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI(_citing_responder) as fake, tempfile.TemporaryDirectory() as data_dir:
        services = Services.build(
            settings_for(
                data_dir, "timing", openai_base_url=fake.url, openai_api_key="bench-key-eval", llm_concurrency=8
            )
        )
        figures = {}
        analysed = {}
        calls: list[int] = []
        refused = 0
        try:
            source = services.source(mirror)
            for label in ("cold", "warm"):
                seconds = []
                analysed[label] = 0
                for q in questions:
                    trace = Trace()
                    started = time.monotonic()
                    before = len(fake.requests)
                    async for _ in services.history.answer(source, window_of(q), q["question"], q["lang"], trace=trace):
                        pass
                    if label == "cold":
                        calls.append(len(fake.requests) - before)
                    seconds.append(trace.first_piece_at - started)
                    refused += len(trace.refused)
                    analysed[label] += trace.analysed
                figures[label] = seconds
        finally:
            await services.aclose()
    for label, seconds in figures.items():
        cuts = statistics.quantiles(seconds, n=20)
        print(
            f"time to the first streamed chunk, fake LLM, {label}: p50 {statistics.median(seconds):.2f} s, "
            f"p95 {cuts[18]:.2f} s, max {max(seconds):.2f} s ({len(seconds)} questions; "
            f"{analysed[label]} commits analysed and indexed first)"
        )
    print(f"invented citations replaced: {refused} of {2 * len(questions)} planted")
    bound = Settings(_env_file=None).history_max_analyses
    print(
        f"LLM calls per question (cold, the fake endpoint): max {max(calls)}, mean {statistics.mean(calls):.1f} "
        f"(bound HISTORY_MAX_ANALYSES + 2 = {bound + 2}; {len(calls)} questions)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mirror",
        default=os.environ.get("DIGEST_EVAL_UV_MIRROR"),
        help="a bare clone of astral-sh/uv (or $DIGEST_EVAL_UV_MIRROR)",
    )
    parser.add_argument("--labels", default=str(DEFAULT_LABELS))
    parser.add_argument(
        "--split",
        choices=("heldout", "tune", "all"),
        default="heldout",
        help="questions for --show and --llm (default: the held-out half)",
    )
    parser.add_argument("--tune", action="store_true", help="grid search on the tuning half")
    parser.add_argument("--llm", help="a real OpenAI-compatible endpoint for the answers' citations")
    parser.add_argument("--model", default="local", help="model name for --llm")
    parser.add_argument("--context", type=int, default=None, help="the --llm model's context window")
    parser.add_argument("--limit", type=int, default=0, help="with --llm: only the first N questions of the split")
    parser.add_argument("--only-llm", action="store_true", help="with --llm: only the real endpoint's figures")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--only-timing", action="store_true", help="only the time to the first chunk")
    parser.add_argument("--show", action="store_true", help="per question: missed and extra sources")
    parser.add_argument(
        "--paired", action="store_true", help="rows with an `en` field: recall@10 in Chinese and in English"
    )
    parser.add_argument("--show-query", action="store_true", help="with --paired --show: the Chinese query's terms")
    args = parser.parse_args()
    if not args.mirror or not Path(args.mirror).exists():
        print(
            "no mirror: pass --mirror DIR (a bare clone of the labels' repository) or set DIGEST_EVAL_UV_MIRROR; "
            "nothing measured"
        )
        return
    logging.disable(logging.WARNING)
    asyncio.run(evaluate(args, args.mirror))


if __name__ == "__main__":
    main()
