"""A fake OpenAI-compatible chat-completions server for tests and benchmarks.

It is a real HTTP server (ThreadingHTTPServer on 127.0.0.1, port 0) that answers
`POST /v1/chat/completions` exactly as the OpenAI API shapes it, so the real `openai` SDK reaches
it through `base_url=fake.url` and nothing is monkeypatched.

Usage::

    with FakeOpenAI() as fake:                      # default: every answer is a valid analysis
        settings = make_settings(openai_base_url=fake.url, openai_api_key="sk-test-1")
        ...
        fake.requests          # every request body (parsed JSON), in arrival order
        fake.usages            # the `usage` each completion reported (prompt/completion tokens)
        fake.request_headers   # the matching headers (lower-case names)
        fake.peak_concurrency  # most requests open at the same time (queued ones included)

Scripting — the server asks `fake.responder(request_json)` what to do with each request. It may
return a `Reply`, a plain string (the answer's content) or a dict (serialised as the content)::

    fake.responder = script(Reply(status=429, headers={"Retry-After": "0.05"}), Reply(content="{}"))
    fake.responder = lambda req: Reply(content="...", finish_reason="length")

`Reply` fields: `content`, `finish_reason`, `status` (non-200 sends `error`, an OpenAI error body),
`headers` (e.g. Retry-After), `delay` (seconds before answering), `chunks` (explicit stream deltas),
`chunk_delay` (seconds between stream chunks), `hang` (never answer: the client must time out; the
thread is released when the server stops).

Server options: `latency` (added before every answer), `max_concurrent` with `over_cap="queue"`
(wait for a slot) or `over_cap="reject"` (answer 429 with `Retry-After: retry_after`), and
`first_token_delay` (streams: seconds between the headers and the first content chunk).

Endpoints as measured (README "LLM endpoints"), for any responder:
- `window=6144`: a context window for every request, streams included — prompt + `max_tokens`
  over it is refused with HTTP 400 in a real server's wording (`wordings`, cycled; see
  CONTEXT_WORDINGS; `window_refusals` counts them).
- `blank_every=3`: every third completion answers blank content (`"   "`, finish_reason stop),
  as DeepSeek does when its JSON mode produced nothing; `blank_rate=0.33` with `seed` does it at
  random instead; `blank_first=2` answers each distinct prompt blank the first two times it is
  sent (`blanks` counts them all).
- `tokens=measured_tokens`: how the server counts a prompt (usage.prompt_tokens and the window);
  the default `server_tokens` counts ASCII at 3 characters a token and Chinese 1.5 a character;
  `measured_tokens` is llama-cpp-python's Qwen2.5 count as measured: 0.73–0.81 of the client's
  estimate.
- `refuse_json_schema=True`: `response_format: json_schema` answered as llama-cpp-python does:
  HTTP 500 with a validation message (`refused_schema` counts them).

Requests with `"stream": true` are answered as server-sent events: `data: {chat.completion.chunk}`
lines (a role chunk, content chunks, a final chunk with `finish_reason`, then a usage chunk when
`stream_options.include_usage` is set) and `data: [DONE]`.

The default responder answers a valid analysis JSON (`analysis_json()`), a `{"bullets": [...]}`
object when the system prompt asks for bullets (the day's headline), and plain prose for streams.
An analysis prompt that asks for other languages' texts under "translations" gets them
(`with_translations`); a translation prompt (`TRANSLATE_MARK`) gets every entry's texts in its
language, as long as a real translation (`translation_json`). Completion tokens are counted by
the same tokenizer as prompts.

Benchmarks: `FakeOpenAI(latency=0.5, max_concurrent=8)` models a slow endpoint that queues beyond
8 concurrent requests; `over_cap="reject"` makes it a rate-limited one (429 + Retry-After).
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
HANG_LIMIT = 30.0  # a hanging request is released at the latest after this long (or at stop())


@dataclass
class Reply:
    """What the fake answers to one request."""

    content: str | None = None  # None: the default responder's content for this request
    finish_reason: str = "stop"
    status: int = 200
    error: dict[str, Any] | None = None  # the "error" object of a non-200 answer
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunks: list[str] | None = None  # stream deltas; default: `content` split in ~3 pieces
    chunk_delay: float = 0.0
    hang: bool = False
    body: Any = None  # a non-200 answer's whole JSON body, when it is not OpenAI's {"error": …}


Responder = Callable[[dict], "Reply | str | dict"]


ANSWER_EN: dict[str, Any] = {
    "change_type": "feature",
    "importance": "medium",
    "importance_reason": "Adds a new option to the public CLI.",
    "summary": "Adds a --since flag to the export command.",
    "impact": "Users can export only recent records.",
    "insights": {"architecture": "", "performance": "Smaller exports.", "security": ""},
    "risks": ["Date parsing differs by locale."],
    "recommendations": ["Document the accepted date formats."],
}
ANSWER_ZH: dict[str, Any] = {  # what a model that follows the Chinese prompt answers
    "change_type": "feature",
    "importance": "medium",
    "importance_reason": "为公开的命令行新增了一个选项。",
    "summary": "为 export 命令新增 --since 参数。",
    "impact": "用户可以只导出最近的记录。",
    "insights": {"architecture": "", "performance": "导出的数据更少。", "security": ""},
    "risks": ["日期解析因地区设置而异。"],
    "recommendations": ["在文档中写明接受的日期格式。"],
}
BULLETS_EN = (
    "The export command gained a --since flag.",
    "A bug in the cache expiry was fixed.",
    "Watch out: the config file format changed.",
)
BULLETS_ZH = ("export 命令新增了 --since 参数。", "修复了缓存过期的一个问题。", "注意：配置文件格式有变化。")
STREAM_EN = "This commit adds a --since flag so exports can be limited to recent records."
STREAM_ZH = "这个提交新增了 --since 参数，导出时可以只保留最近的记录。"


def analysis_json(lang: str = "en", **overrides: Any) -> str:
    """A valid analysis answer (the schema of prompts/analyze_commit.*.j2) in `lang`, fields
    overridable."""
    answer: dict[str, Any] = json.loads(json.dumps(ANSWER_ZH if lang == "zh" else ANSWER_EN))
    answer.update(overrides)
    return json.dumps(answer, ensure_ascii=False)


def headline_json(bullets: Iterable[str] | None = None, lang: str = "en") -> str:
    return json.dumps({"bullets": list(bullets or (BULLETS_ZH if lang == "zh" else BULLETS_EN))}, ensure_ascii=False)


def request_lang(request: dict) -> str:
    """The language the prompt asks for: "zh" when its system part (or first message) is Chinese."""
    messages = request.get("messages") or [{}]
    first = next(
        (m.get("content") or "" for m in messages if m.get("role") == "system"), messages[0].get("content") or ""
    )
    return "zh" if re.search(r"[\u4e00-\u9fff]", str(first)) else "en"


def default_responder(request: dict) -> Reply:
    system = next((m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "system"), "")
    lang = request_lang(request)
    if request.get("stream"):
        return Reply(content=STREAM_ZH if lang == "zh" else STREAM_EN)
    if '"bullets"' in system:
        return Reply(content=headline_json(lang=lang))
    if TRANSLATE_MARK in system:
        return Reply(content=translation_json(request))
    _title, path = commit_facts(request)
    if path:  # like a real model, the summary names something in the commit it was shown
        summary = _summary(lang, path)
        return Reply(content=with_translations(request, analysis_json(lang, summary=summary)))
    return Reply(content=with_translations(request, analysis_json(lang)))


def _summary(lang: str, path: str) -> str:
    if lang == "zh":
        return f"为 export 命令新增 --since 参数，改动 {path}。"
    return f"Adds a --since flag to the export command. Touches {path}."


# --- several languages (bot/analysis/texts.py, bot/analysis/translate.py) ---------------------------

TRANSLATE_MARK = '{"entries": [{"id":'  # the translation prompt's answer format
_ALSO = re.compile(r'"(zh|en)": \{"importance_reason": "…"')


def asked_languages(request: dict) -> list[str]:
    """The other languages an analysis prompt asks for under "translations" ([] for none)."""
    system = next((m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "system"), "")
    return _ALSO.findall(system) if '"translations"' in system else []


def with_translations(request: dict, answer: str) -> str:
    """`answer` (an analysis JSON) with the texts in each language the prompt also asks for, as a
    model that follows the prompt writes them (the same answer, in that language)."""
    also = asked_languages(request)
    if not also:
        return answer
    data = json.loads(answer)
    _title, path = commit_facts(request)
    data["translations"] = {}
    for code in also:
        texts = json.loads(analysis_json(code, **({"summary": _summary(code, path)} if path else {})))
        data["translations"][code] = {k: v for k, v in texts.items() if k not in ("change_type", "importance")}
    return json.dumps(data, ensure_ascii=False)


_CODE_SPAN = re.compile(r"`[^`]*`")
_FILLER_EN = "the change keeps this behaviour and affects the users of the module as described".split()
_FILLER_ZH = "这个改动保持了原有的行为并按所述影响该模块的用户"


def translated_text(text: str, lang: str) -> str:
    """A stand-in translation of `text` into `lang`, about as long as a real one (English runs
    ~1.8 words per 3 Chinese characters), its code spans kept."""
    code = " ".join(_CODE_SPAN.findall(text))
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    words = len(re.findall(r"[A-Za-z]{2,}", text))
    if lang == "zh":
        n = max(6, int(words * 1.7 + cjk))
        body = (_FILLER_ZH * (n // len(_FILLER_ZH) + 1))[:n]
        return f"{body}{code}。"
    n = max(4, int(cjk / 1.7 + words))
    body = " ".join((_FILLER_EN * (n // len(_FILLER_EN) + 1))[:n])
    return f"{body.capitalize()} {code}".strip() + "."


def translation_json(request: dict) -> str:
    """The answer to a translation prompt: every entry's texts, in the prompt's language."""
    lang = request_lang(request)
    user = next((m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user"), "")
    block = re.search(r"<analyses>\n(.*?)\n</analyses>", user, re.S)
    entries = []
    for line in block.group(1).splitlines() if block else []:
        item = json.loads(line)
        entries.append({"id": item["id"], "texts": [translated_text(t, lang) for t in item["texts"]]})
    return json.dumps({"entries": entries}, ensure_ascii=False)


def commit_facts(request: dict) -> tuple[str, str]:
    """(title, first file path) of the commit in an analysis prompt, or ("", "")."""
    user = next((m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user"), "")
    title = re.search(r"^title: (.*)$", user, re.M)
    files = re.search(r"<files>\n(?:\w+ )?(\S+)", user)
    return (title.group(1).strip() if title else ""), (files.group(1) if files else "")


def script(*replies: Reply | str | dict, then: Responder | None = None) -> Responder:
    """A thread-safe responder answering `replies` in order, then `then` (default: the last reply)."""
    lock = threading.Lock()
    queue = list(replies)

    def respond(request: dict):
        with lock:
            if len(queue) > 1 or (queue and then is not None):
                return queue.pop(0)
            if queue:
                return queue[0]
        return (then or default_responder)(request)

    return respond


# --- endpoints as they behave in the wild (the README's "LLM endpoints" table) ---------------------

BEHAVIOURS = (
    "think",
    "fenced",
    "sloppy",
    "list",
    "schema_only",
    "refuse_400",
    "refuse_422",
    "llamacpp_500",
    "context",
    "echo",
    "hang",
)
SMALL_MODEL = (  # what a real 1.5B model did on real days (issue 25)
    "copy_rows",  # the headline's bullets are the prompt's own commit rows, verbatim
    "wrong_language",  # English answers (analyses, headline, streams) to a Chinese prompt
    "filler",  # `<无>` impact, "No further recommendations needed.", reason = the title
)
CONTEXT_WORDINGS = {  # HTTP 400 messages, as worded by OpenAI, vLLM (older, newer) and OpenRouter
    "openai": (
        "This model's maximum context length is {window} tokens. However, your messages resulted in "
        "{total} tokens. Please reduce the length of the messages."
    ),
    "vllm_old": (
        "This model's maximum context length is {window} tokens. However, you requested {total} tokens "
        "({prompt} in the messages, {output} in the completion). Please reduce the length of the "
        "messages or completion."
    ),
    "vllm_new": (
        "'max_tokens' or 'max_completion_tokens' is too large: {output}. This model's maximum context "
        "length is {window} tokens and your request has {prompt} input tokens ({output} > {window} - "
        "{prompt})."
    ),
    "openrouter": (
        "This endpoint's maximum context length is {window} tokens. However, you requested about "
        "{total} tokens ({prompt} of text input, {output} in the output). Please reduce the length "
        "of either one."
    ),
}


def good_answer(request: dict, **overrides: Any) -> str:
    """A valid analysis, in the prompt's language, that names the commit it was shown (title and
    first file)."""
    title, path = commit_facts(request)
    lang = request_lang(request)
    said = (
        f"修改了 {path or '代码'}，对应“{title or '这个提交'}”。"
        if lang == "zh"
        else f"Changes {path or 'the code'} for “{title or 'this commit'}”."
    )
    overrides.setdefault("summary", said)
    return analysis_json(lang, **overrides)


def measured_tokens(request: dict) -> int:
    """A prompt counted as llama-cpp-python counted Qwen2.5-Coder's (measured on a real uv day):
    0.73–0.81 of the client's own estimate, varying by text (a stable hash picks the ratio), plus
    the chat template's tokens per message."""
    from bot.diffs import estimate_tokens

    total = 0.0
    for m in request.get("messages", []):
        text = str(m.get("content") or "")
        ratio = 0.73 + 0.08 * (zlib.crc32(text.encode()) % 1000) / 999
        total += estimate_tokens(text) * ratio + 5
    return math.ceil(total)


def qwen_like_tokens(request: dict) -> int:
    """A prompt counted as Qwen2.5's tokenizer counts it relative to the client's estimate, by
    kind of text (measured with llama-cpp-python's /extras/tokenize): Chinese at 0.58, everything
    else (English, code, diffs) at 0.76, plus the chat template's tokens per message — so a ratio
    learnt on a Chinese prompt with a small diff undercounts a Chinese prompt that is mostly diff."""
    from bot.diffs import estimate_tokens_split

    total = 0.0
    for m in request.get("messages", []):
        cjk, rest = estimate_tokens_split(str(m.get("content") or ""))
        total += 0.58 * cjk + 0.76 * rest + 5
    return math.ceil(total)


def server_tokens(request: dict) -> int:
    """A tokenizer unlike the client's estimate: ~3 ASCII characters a token, 1.5 per other
    character (Chinese costs more than simple estimates assume), 4 per message."""
    total = 0.0
    for m in request.get("messages", []):
        text = str(m.get("content") or "")
        ascii_chars = sum(1 for ch in text if ord(ch) < 128)
        total += ascii_chars / 3 + (len(text) - ascii_chars) * 1.5 + 4
    return math.ceil(total)


class Behaviour:
    """A responder that plays one endpoint behaviour for analyses, headlines and streams.
    `calls` counts the requests by kind; `window` and `wordings` are for "context"."""

    THINK = (
        '<think>The user wants JSON like {"summary": "draft"} — wait, check the diff first '
        '{not json}. Draft: {"change_type": "other", "importance": "high"}</think>\n'
    )

    def __init__(self, name: str, *, window: int = 6144, wordings: Iterable[str] = tuple(CONTEXT_WORDINGS)):
        if name not in BEHAVIOURS + SMALL_MODEL:
            raise ValueError(f"unknown behaviour {name!r}")
        self.name = name
        self.window = window
        self._wordings = itertools.cycle(list(wordings))
        self._lock = threading.Lock()
        self.refusals = 0  # context-length errors answered

    def __call__(self, request: dict) -> Reply:
        name = self.name
        if name == "hang":
            return Reply(hang=True)
        fmt = request.get("response_format") or {}
        kind = fmt.get("type")
        if name == "context" and (refused := self._over_window(request)) is not None:
            return refused
        if name == "refuse_422" and fmt:  # a FastAPI server that knows no response_format
            return Reply(
                status=422,
                body={
                    "detail": [
                        {
                            "type": "extra_forbidden",
                            "loc": ["body", "response_format"],
                            "msg": "Extra inputs are not permitted",
                            "input": fmt,
                        }
                    ]
                },
            )
        if name == "refuse_400" and (kind == "json_schema" or "schema" in fmt):
            return Reply(
                status=400,
                error={
                    "message": f"Invalid parameter: 'response_format' of type '{kind}' with a schema is not "
                    "supported with this model.",
                    "type": "invalid_request_error",
                    "param": "response_format",
                    "code": None,
                },
            )
        if name == "llamacpp_500" and kind == "json_schema":
            # llama-cpp-python validates response_format inside the route: a 500 naming the format
            return Reply(status=500, error=dict(LLAMACPP_SCHEMA_ERROR))
        if request.get("stream"):
            return self._stream(request)
        system = next((m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "system"), "")
        if '"bullets"' in system:
            return Reply(content=self._headline(request))
        return Reply(content=self._analysis(request, kind))

    def _headline(self, request: dict) -> str:
        lang = "en" if self.name == "wrong_language" else request_lang(request)
        if self.name == "copy_rows":  # the first two rows of the <commits> block, markers and all
            prompt = "\n".join(str(m.get("content") or "") for m in request["messages"])  # retries too
            rows = re.search(r"<commits>\n(.*?)\n</commits>", prompt, re.S)
            lines = [line.lstrip("- ").strip() for line in (rows.group(1) if rows else "").splitlines()]
            return headline_json(lines[:2] or None, lang=lang)
        answer = headline_json(lang=lang)
        return self.THINK + answer if self.name == "think" else answer

    def _analysis(self, request: dict, kind: str | None) -> str:
        name, answer = self.name, good_answer(request)
        if name == "wrong_language":  # the English commit it read, answered in English
            title, path = commit_facts(request)
            return analysis_json("en", summary=f"Changes {path or 'the code'} for “{title or 'this commit'}”.")
        if name == "filler":
            title, _ = commit_facts(request)
            zh = request_lang(request) == "zh"
            return good_answer(
                request,
                impact="<无>" if zh else "<none>",
                importance_reason=title,
                recommendations=["No further recommendations needed."],
                risks=["None"],
            )
        if name == "think":
            return self.THINK + answer
        if name == "fenced":
            return (
                f"Here is my analysis of the commit:\n\n```json\n{answer}\n```\n\n"
                "Note: the {braces} in the title are literal; see {docs}."
            )
        if name == "sloppy":  # a trailing comma and a raw newline inside a string
            data = json.loads(answer)
            data["impact"] = "Users of the export command.\nScripts that parse its output."
            text = json.dumps(data, ensure_ascii=False, indent=2)
            return text.replace("\\n", "\n").rstrip("}").rstrip() + ",\n}"
        if name == "list":
            return f"[{answer}]"
        if name == "schema_only" and kind != "json_schema":
            return json.dumps({"change_type": "feat", "summary": "y"})  # a small model left alone
        if name == "echo":
            return analysis_json(
                summary="<what changed and why>", importance_reason="<one sentence: why this importance>"
            )
        if name == "refuse_422":  # no JSON mode: the model wraps the object in prose
            return f"Sure! {answer} Hope this helps."
        return answer

    def _stream(self, request: dict) -> Reply:
        prose = "This commit changes the export path; scripts reading its output may need updating."
        if request_lang(request) == "zh" and self.name != "wrong_language":
            prose = "这个提交改动了导出路径，读取其输出的脚本可能需要更新。"
        if self.name == "think":  # the tags split across chunks, braces inside
            return Reply(
                chunks=["<thi", "nk>The user asks {about this}", ' and {"x": 1}</th', "ink>\n", prose[:20], prose[20:]]
            )
        return Reply(content=prose)

    def _over_window(self, request: dict) -> Reply | None:
        refused = over_window(request, self.window, next(self._wordings), server_tokens)
        if refused is not None:
            with self._lock:
                self.refusals += 1
        return refused


def over_window(request: dict, window: int, wording: str, tokens: Callable[[dict], int]) -> Reply | None:
    """The HTTP 400 a real server answers when prompt + max_tokens exceed its window, else None."""
    prompt = tokens(request)
    output = int(request.get("max_tokens") or 0)
    if prompt + output <= window:
        return None
    total = prompt if wording == "openai" else prompt + output
    return Reply(
        status=400,
        error={
            "message": CONTEXT_WORDINGS[wording].format(window=window, prompt=prompt, output=output, total=total),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        },
    )


LLAMACPP_SCHEMA_ERROR = {
    "message": "1 validation error for ChatCompletionRequestResponseFormat\ntype\n  Input should "
    "be 'text' or 'json_object' [type=literal_error, input_value='json_schema', "
    "input_type=str]",
    "type": "internal_server_error",
    "param": None,
    "code": None,
}


class FakeOpenAI:
    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        max_concurrent: int | None = None,
        over_cap: str = "queue",
        retry_after: float = 0.05,
        first_token_delay: float = 0.0,
        model: str = "fake-model",
        window: int | None = None,
        wordings: Iterable[str] = tuple(CONTEXT_WORDINGS),
        blank_every: int = 0,
        blank_rate: float = 0.0,
        blank_first: int = 0,
        seed: int = 7,
        tokens: Callable[[dict], int] | None = None,
        refuse_json_schema: bool = False,
        clamps_output: bool = False,
    ):
        if over_cap not in ("queue", "reject"):
            raise ValueError("over_cap must be 'queue' or 'reject'")
        self.responder: Responder = responder or default_responder
        self.latency = latency
        self.max_concurrent = max_concurrent
        self.over_cap = over_cap
        self.retry_after = retry_after
        self.first_token_delay = first_token_delay
        self.model = model
        self.window = window
        self._wordings = itertools.cycle(list(wordings))
        self.blank_every = blank_every
        self.blank_rate = blank_rate
        self.blank_first = blank_first
        self._asked: dict[str, int] = {}  # times each distinct prompt was answered (blank_first)
        self._random = random.Random(seed)
        self.tokens: Callable[[dict], int] = tokens or server_tokens
        self.refuse_json_schema = refuse_json_schema
        # llama-cpp-python: only a prompt that fills the window is refused; prompt + max_tokens over
        # it is answered with max_tokens cut to what is left (an answer longer than that stops
        # with finish_reason "length"). `rooms`: the window left after each prompt answered.
        self.clamps_output = clamps_output
        self.rooms: list[int] = []
        self.window_refusals = 0  # context-length errors answered because of `window`
        self.blanks = 0  # completions answered blank because of blank_every / blank_rate
        self.refused_schema = 0  # json_schema requests refused because of refuse_json_schema
        self._answered = 0  # completions answered 200 (for blank_every)
        self.requests: list[dict] = []
        self.usages: list[dict[str, int]] = []  # the `usage` of every completion answered (not streams)
        self.request_headers: list[dict[str, str]] = []
        self.peak_concurrency = 0
        self.rejected = 0  # requests answered 429 because of max_concurrent
        self._open = 0
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(max_concurrent) if max_concurrent else None
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The base URL to give the SDK (ends with /v1)."""
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases hanging and sleeping handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- used by the handler ----------------------------------------------------------------
    def _enter(self, body: dict, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            self._open += 1
            self.peak_concurrency = max(self.peak_concurrency, self._open)

    def _leave(self) -> None:
        with self._lock:
            self._open -= 1

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _next_id(self) -> str:
        return f"chatcmpl-fake{next(self._ids):06d}"

    def _endpoint_refusal(self, request: dict) -> Reply | None:
        """What the endpoint itself refuses before any responder sees the request."""
        fmt = request.get("response_format") or {}
        if self.refuse_json_schema and fmt.get("type") == "json_schema":
            with self._lock:
                self.refused_schema += 1
            return Reply(status=500, error=dict(LLAMACPP_SCHEMA_ERROR))
        if self.window:
            with self._lock:
                wording = next(self._wordings)
            if self.clamps_output:
                prompt = self.tokens(request)
                request_output = int(request.get("max_tokens") or 0)
                if prompt < self.window:
                    with self._lock:
                        self.rooms.append(self.window - prompt)
                    return None
                # llama-cpp-python's server words a prompt over the window as vLLM (older) does
                refused = Reply(
                    status=400,
                    error={
                        "message": CONTEXT_WORDINGS["vllm_old"].format(
                            window=self.window, prompt=prompt, output=request_output, total=prompt + request_output
                        ),
                        "type": "invalid_request_error",
                        "param": "messages",
                        "code": "context_length_exceeded",
                    },
                )
            else:
                refused = over_window(request, self.window, wording, self.tokens)
            if refused is not None:
                with self._lock:
                    self.window_refusals += 1
                return refused
        return None

    def _blank(self, request: dict, reply: Reply) -> Reply:
        """Every blank_every-th completion, one at blank_rate, or a prompt's first blank_first
        answers come back blank."""
        if (
            request.get("stream")
            or reply.status != 200
            or reply.hang
            or not (self.blank_every or self.blank_rate or self.blank_first)
        ):
            return reply
        prompt = json.dumps(request.get("messages"), sort_keys=True)
        with self._lock:
            self._answered += 1
            self._asked[prompt] = self._asked.get(prompt, 0) + 1
            blank = bool(
                (self.blank_every and self._answered % self.blank_every == 0)
                or (self.blank_rate and self._random.random() < self.blank_rate)
                or self._asked[prompt] <= self.blank_first
            )
            if blank:
                self.blanks += 1
        return Reply(**{**reply.__dict__, "content": "   ", "finish_reason": "stop"}) if blank else reply


def _as_reply(answer: Reply | str | dict, request: dict) -> Reply:
    if isinstance(answer, Reply):
        if answer.content is None and answer.status == 200 and not answer.hang:
            default = default_responder(request)
            return Reply(**{**answer.__dict__, "content": default.content})
        return answer
    if isinstance(answer, dict):
        return Reply(content=json.dumps(answer, ensure_ascii=False))
    return Reply(content=str(answer))


def _usage(request: dict, content: str, tokens: Callable[[dict], int] = server_tokens) -> dict[str, int]:
    prompt = tokens(request)  # the same count the window is enforced with
    # the answer counted by the same tokenizer (Chinese costs more tokens a character than English)
    completion = max(1, tokens({"messages": [{"role": "assistant", "content": content}]}) - 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _split(content: str) -> list[str]:
    if not content:
        return []
    size = max(1, -(-len(content) // 3))
    return [content[i : i + size] for i in range(0, len(content), size)]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True  # a hanging handler never blocks stop()

    def handle_error(self, request, client_address) -> None:
        """A client that hung up (timeout, closed stream) is normal here; anything else is printed."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    # Like real servers: no Nagle delay between the headers and the body (else every
    # response waits ~40 ms for a delayed ACK on loopback).
    disable_nagle_algorithm = True
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"  # keep-alive like the real API; streams use chunked encoding

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:  # http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.split("?")[0] != CHAT_PATH:
            self._send_error(404, {"message": f"Unknown path {self.path}", "type": "invalid_request_error"})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_error(400, {"message": "The request body is not valid JSON.", "type": "invalid_request_error"})
            return
        fake = self.fake
        fake._enter(body, {k.lower(): v for k, v in self.headers.items()})
        acquired = False
        try:
            if fake._slots is not None:
                acquired = fake._slots.acquire(blocking=fake.over_cap == "queue")
                if not acquired:
                    with fake._lock:
                        fake.rejected += 1
                    self._send_error(
                        429,
                        {
                            "message": "Rate limit reached: too many concurrent requests.",
                            "type": "rate_limit_exceeded",
                            "code": "rate_limit_exceeded",
                        },
                        {"Retry-After": f"{fake.retry_after:g}"},
                    )
                    return
            self._answer(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to answer
        finally:
            if acquired:
                fake._slots.release()
            fake._leave()

    def _answer(self, request: dict) -> None:
        fake = self.fake
        refused = fake._endpoint_refusal(request)
        reply = refused or fake._blank(request, _as_reply(fake.responder(request), request))
        fake._sleep(fake.latency + reply.delay)
        if reply.hang:
            fake._stopping.wait(HANG_LIMIT)
            self.close_connection = True
            return
        if reply.status != 200:
            if reply.body is not None:
                self._send_json(reply.status, reply.body, reply.headers)
                return
            error = reply.error or {"message": f"Fake error {reply.status}.", "type": "server_error"}
            self._send_error(reply.status, error, reply.headers)
            return
        if request.get("stream"):
            self._send_stream(request, reply)
        else:
            self._send_completion(request, reply)

    def _send_completion(self, request: dict, reply: Reply) -> None:
        content = reply.content or ""
        fake = self.fake
        if fake.clamps_output and fake.window:
            left = fake.window - fake.tokens(request)  # the room llama-cpp-python leaves the answer
            if len(content) // 4 + 1 > left:
                content, reply = content[: max(left, 0) * 4], Reply(**{**reply.__dict__, "finish_reason": "length"})
        payload = {
            "id": self.fake._next_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or self.fake.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": _usage(request, content, self.fake.tokens),
            "system_fingerprint": "fp_fake",
        }
        with self.fake._lock:
            self.fake.usages.append(payload["usage"])
        self._send_json(200, payload, reply.headers)

    def _send_stream(self, request: dict, reply: Reply) -> None:
        fake = self.fake
        chunk_id, created = fake._next_id(), int(time.time())
        model = request.get("model") or fake.model

        def chunk(
            delta: dict, finish_reason: str | None = None, usage: dict | None = None, choices: bool = True
        ) -> dict:
            return {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]
                if choices
                else [],
                "usage": usage,
            }

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self._write_event(chunk({"role": "assistant", "content": ""}))
        fake._sleep(fake.first_token_delay)
        pieces = reply.chunks if reply.chunks is not None else _split(reply.content or "")
        for i, piece in enumerate(pieces):
            if i:
                fake._sleep(reply.chunk_delay)
            self._write_event(chunk({"content": piece}))
        self._write_event(chunk({}, reply.finish_reason))
        if (request.get("stream_options") or {}).get("include_usage"):
            self._write_event(chunk({}, usage=_usage(request, "".join(pieces), fake.tokens), choices=False))
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")  # the terminating zero-length chunk

    def _write_event(self, data: dict) -> None:
        self._write_chunk(f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_error(self, status: int, error: dict, headers: dict[str, str] | None = None) -> None:
        full = {"message": "", "type": "invalid_request_error", "param": None, "code": None, **error}
        self._send_json(status, {"error": full}, headers or {})

    def _send_json(self, status: int, payload: dict, headers: dict[str, str]) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
