"""A real small model, tried as an operator would (issue 25): a day's digest, a question in its
thread, and a question about a period, through the bot's own CLI, with a recording proxy between
the bot and the endpoint. Prints figures; asserts nothing.

  python bench/eval_small_model.py --upstream http://127.0.0.1:8099/v1 --model NAME \
      --repo /path/to/bare/mirror --date 2026-07-02 [--tz UTC] [--lang zh] [--window 8192] \
      [--question "…"] [--commit SHA] [--period-question "…" --since D --until D --cite SHA,SHA]

How to run the model (../shared/notes/llm-endpoints.md): Qwen2.5-Coder-1.5B-Instruct Q4_K_M under
`python -m llama_cpp.server --model M.gguf --n_ctx 8192 --n_threads 1 --n_threads_batch 2`.
The window is not configured: the bot learns it from the server's refusal, as in the field.

Printed:
  analyses accepted       commits whose published analysis is the model's (origin "llm") ÷ commits
  in the digest language  published LLM texts judged in the digest's language ÷ published LLM texts;
                          and the model's raw answers in the wrong language (what the checks caught)
  copied headline bullets published bullets that copy a commit row of the headline prompt (target 0);
                          and raw answers with a copied bullet
  answer room             per completion: window − the prompt tokens the server counted; the
                          smallest ÷ the reserve (target ≥ 1)
  thread answer           the answer's language; streamed requests
  period question         LLM requests it cost (≤ HISTORY_MAX_ANALYSES + 2), recall of --cite
                          among the SHAs the answer lists
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.analysis.language import wrong_language  # noqa: E402
from bot.analysis.llm import OUTPUT_RESERVE  # noqa: E402
from bot.analysis.summary import copies_row  # noqa: E402


class Recorder:
    """A pass-through proxy that keeps each request, its answer and the server's usage."""

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.calls: list[dict] = []
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                self._relay(None)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._relay(body)

            def _relay(self, body):
                url = recorder.upstream + self.path.removeprefix("/v1")
                request = urllib.request.Request(
                    url,
                    data=body,
                    method="POST" if body is not None else "GET",
                    headers={"Content-Type": "application/json"},
                )
                sent = json.loads(body) if body else {}
                started = time.monotonic()
                try:
                    with urllib.request.urlopen(request, timeout=3600) as answer:
                        status, raw = answer.status, answer.read()
                except urllib.error.HTTPError as exc:
                    status, raw = exc.code, exc.read()
                call = {"request": sent, "status": status, "seconds": time.monotonic() - started}
                if sent.get("stream"):
                    call["content"] = "".join(
                        (json.loads(line[6:])["choices"] or [{}])[0].get("delta", {}).get("content") or ""
                        for line in raw.decode().splitlines()
                        if line.startswith("data: {")
                    )
                elif status == 200:
                    data = json.loads(raw)
                    call["usage"] = data.get("usage") or {}
                    call["content"] = data["choices"][0]["message"]["content"] if data.get("choices") else ""
                    call["finish"] = data["choices"][0].get("finish_reason") if data.get("choices") else ""
                else:
                    call["error"] = raw.decode(errors="replace")[:300]
                with recorder.lock:
                    recorder.calls.append(call)
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream" if sent.get("stream") else "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def bot(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=6 * 3600
    )


def kind(call: dict) -> str:
    messages = call["request"].get("messages") or [{}]
    if call["request"].get("stream"):
        return "stream"
    return "headline" if '"bullets"' in str(messages[0].get("content")) else "analysis"


def texts_of(analysis: dict) -> list[str]:
    insights = analysis.get("insights") or {}
    return [
        analysis.get("summary", ""),
        analysis.get("importance_reason", ""),
        analysis.get("impact", ""),
        *(insights.get(k, "") for k in ("architecture", "performance", "security")),
        *analysis.get("risks", []),
        *analysis.get("recommendations", []),
    ]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--upstream", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--repo", required=True)
    p.add_argument("--date", required=True)
    p.add_argument("--tz", default="UTC")
    p.add_argument("--lang", default="zh")
    p.add_argument("--window", type=int, default=8192)
    p.add_argument("--question", default="")
    p.add_argument("--commit", default="")
    p.add_argument("--period-question", default="")
    p.add_argument("--since", default="")
    p.add_argument("--until", default="")
    p.add_argument("--cite", default="")
    p.add_argument("--timeout", default="900")
    p.add_argument("--dump", default="", help="write every recorded request and answer to this JSON file")
    args = p.parse_args()

    recorder = Recorder(args.upstream)
    data = tempfile.mkdtemp(prefix="small-model-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_", "REDIS_", "SLACK_", "FEISHU_"))}
    env.update(
        {
            "OPENAI_BASE_URL": recorder.url,
            "OPENAI_API_KEY": "",
            "LLM_MODEL": args.model,
            "LLM_TIMEOUT": args.timeout,
            "LLM_MAX_RETRIES": "1",
            "ANALYSIS_CONCURRENCY": "1",
            "LLM_CONCURRENCY": "1",
            "DATA_DIR": data,
            "PYTHONPATH": str(ROOT),
        }
    )
    started = time.monotonic()
    proc = bot(
        ["digest", "--repo", args.repo, "--date", args.date, "--tz", args.tz, "--lang", args.lang, "--format", "json"],
        env,
    )
    if proc.returncode not in (0, 3):
        print(proc.stderr[-2000:])
        return 1
    digest = json.loads(proc.stdout)["digests"][0]
    took = time.monotonic() - started
    entries = digest["entries"]
    llm = [e for e in entries if e["analysis"]["origin"] == "llm"]
    print(f"{digest['repo']} {args.date} ({args.tz}), {args.lang}: {len(entries)} commits in {took:.0f} s")
    print(f"analyses accepted: {len(llm)}/{len(entries)}")
    for e in entries:
        a = e["analysis"]
        print(
            f"  {e['commit']['sha'][:9]} {a['origin']:8} {a['importance']:6} {a['change_type']:10} "
            f"{a['summary'][:70]!r}" + (f"  note: {a['note'][:110]}" if a.get("note") else "")
        )
    published = [t for e in llm for t in texts_of(e["analysis"]) if t]
    in_lang = sum(1 for t in published if not wrong_language(t, args.lang))
    print(f"published LLM texts in the digest's language: {in_lang}/{len(published)}")

    analyses = [c for c in recorder.calls if kind(c) == "analysis" and c.get("content")]
    raw_wrong = 0
    for c in analyses:
        try:
            answer = json.loads(re.search(r"\{.*\}", c["content"], re.S).group(0))
        except (AttributeError, ValueError):
            continue
        raw_wrong += wrong_language("\n".join(str(t) for t in texts_of(answer) if isinstance(t, str)), args.lang)
    print(f"raw analysis answers in the wrong language (caught or corrected): {raw_wrong}/{len(analyses)}")

    headline_calls = [c for c in recorder.calls if kind(c) == "headline" and c.get("content")]
    rows = "\n".join(str(m.get("content")) for c in headline_calls for m in c["request"]["messages"])
    raw_copies = 0
    for c in headline_calls:
        try:
            bullets = json.loads(re.search(r"\{.*\}", c["content"], re.S).group(0)).get("bullets") or []
        except (AttributeError, ValueError):
            continue
        raw_copies += any(isinstance(b, str) and copies_row(b, rows) for b in bullets)
    shown = digest["headline"] if digest.get("headline_origin") == "llm" else []
    copied = sum(1 for b in shown if copies_row(b, rows))
    print(
        f"headline: {digest.get('headline_origin')}; published bullets copying a row: {copied}/{len(shown)}; "
        f"raw headline answers with a copied row: {raw_copies}/{len(headline_calls)}"
    )

    answered = [c for c in recorder.calls if c.get("usage")]
    rooms = [args.window - c["usage"]["prompt_tokens"] for c in answered]
    refused = sum(1 for c in recorder.calls if c["status"] == 400)
    if rooms:
        print(
            f"answer room: smallest {min(rooms)} tokens ÷ reserve {OUTPUT_RESERVE} = {min(rooms) / OUTPUT_RESERVE:.2f}; "
            f"biggest prompt {max(c['usage']['prompt_tokens'] for c in answered)}; {len(answered)} completions; "
            f"{refused} refused as over the window; cut off: {sum(1 for c in answered if c.get('finish') == 'length')}"
        )
    print(
        f"requests: {len(recorder.calls)}; time per completion: "
        f"{sum(c['seconds'] for c in answered) / max(len(answered), 1):.0f} s"
    )

    if args.question and args.commit:
        before = len(recorder.calls)
        asked = bot(["ask", "--repo", args.repo, "--commit", args.commit, "--lang", args.lang, args.question], env)
        streams = [c for c in recorder.calls[before:] if kind(c) == "stream"]
        answer = asked.stdout.strip()
        print(
            f"thread answer: exit {asked.returncode}; {len(streams)} streamed requests; in the digest's language: "
            f"{not wrong_language(answer, args.lang)}; raw streams in the wrong language: "
            f"{sum(wrong_language(c.get('content', ''), args.lang) for c in streams)}/{len(streams)}"
        )
        print("  " + answer[:400].replace("\n", "\n  "))

    if args.period_question:
        before = len(recorder.calls)
        flags = ["--since", args.since] if args.since else []
        flags += ["--until", args.until] if args.until else []
        started = time.monotonic()
        asked = bot(
            ["ask", "--repo", args.repo, "--tz", args.tz, "--lang", args.lang, *flags, args.period_question], env
        )
        calls = recorder.calls[before:]
        cite = [c for c in args.cite.split(",") if c]
        found = [c for c in cite if c[:7] in asked.stdout]
        print(
            f"period question: exit {asked.returncode}; {len(calls)} LLM requests "
            f"({sum(1 for c in calls if kind(c) == 'analysis')} analyses, "
            f"{sum(1 for c in calls if kind(c) == 'stream')} streamed) in {time.monotonic() - started:.0f} s; "
            f"cited commits named in the answer: {len(found)}/{len(cite)}; in the language: "
            f"{not wrong_language(asked.stdout, args.lang)}"
        )
        print("  " + asked.stdout.strip()[:600].replace("\n", "\n  "))
    recorder.server.shutdown()
    if args.dump:
        Path(args.dump).write_text(json.dumps(recorder.calls, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
