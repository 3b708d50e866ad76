"""bot.analysis.llm against a real HTTP fake of the OpenAI API, through the real openai SDK."""

from __future__ import annotations

import asyncio
import json
import logging
import socket

import pytest

from bot.analysis.llm import LLM, RATIO_SLACK, Completion, LLMError
from bot.core.models import BotError
from tests.fakes.openai_server import FakeOpenAI, Reply, analysis_json, script

KEY = "sk-test-3f9a1c7e5b2d4a6f8e0c"
MESSAGES = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Hi"}]


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def make_llm(make_settings, fake):
    made: list[LLM] = []

    def build(**overrides) -> LLM:
        values = {
            "openai_base_url": fake.url,
            "openai_api_key": KEY,
            "llm_model": "test-model",
            "llm_timeout": 5.0,
            "llm_max_retries": 2,
            **overrides,
        }
        llm = LLM(make_settings(**values))
        made.append(llm)
        return llm

    yield build
    for llm in made:
        await llm.aclose()


async def test_complete_returns_text_and_asks_for_json(make_llm, fake):
    llm = make_llm()
    result = await llm.complete(MESSAGES, max_tokens=300)
    assert result == Completion(text=analysis_json(), finish_reason="stop", prompt_tokens=result.prompt_tokens)
    assert result.prompt_tokens > 0  # usage.prompt_tokens, which calibrates the estimate
    body = fake.requests[0]
    assert body["model"] == "test-model"
    assert body["messages"] == MESSAGES
    assert body["max_tokens"] == 300
    assert body["response_format"] == {"type": "json_object"}
    assert fake.request_headers[0]["authorization"] == f"Bearer {KEY}"


async def test_plain_text_mode_sends_no_response_format(make_llm, fake):
    await make_llm().complete(MESSAGES, max_tokens=50, json_mode=False)
    assert "response_format" not in fake.requests[0]


async def test_finish_reason_length_is_reported(make_llm, fake):
    fake.responder = lambda req: Reply(content='{"change_type": "fea', finish_reason="length")
    result = await make_llm().complete(MESSAGES, max_tokens=5)
    assert result.finish_reason == "length"
    assert result.text == '{"change_type": "fea'


async def test_endpoint_rejecting_json_mode_is_asked_again_without_it_and_remembered(make_llm, fake):
    def responder(req):
        if "response_format" in req:
            return Reply(
                status=400,
                error={
                    "message": "response_format is not supported by this model",
                    "type": "invalid_request_error",
                    "param": "response_format",
                },
            )
        return Reply(content='{"ok": true}')

    fake.responder = responder
    llm = make_llm()
    first = await llm.complete(MESSAGES, max_tokens=50)
    second = await llm.complete(MESSAGES, max_tokens=50)
    assert first.text == second.text == '{"ok": true}'
    # 400, retry without, then the next call goes straight without response_format
    assert ["response_format" in r for r in fake.requests] == [True, False, False]


async def test_a_400_unrelated_to_json_mode_is_an_error(make_llm, fake):
    fake.responder = lambda req: Reply(status=400, error={"message": "messages: unknown role 'robot'"})
    with pytest.raises(LLMError) as caught:
        await make_llm().complete(MESSAGES, max_tokens=50)
    assert str(caught.value) == "The LLM endpoint answered HTTP 400 (messages: unknown role 'robot')."
    assert len(fake.requests) == 1  # neither retried nor taken for a format refusal
    assert isinstance(caught.value, BotError)


async def test_429_with_retry_after_is_retried_then_succeeds(make_llm, fake):
    fake.responder = script(
        Reply(status=429, headers={"Retry-After": "0.05"}, error={"message": "Rate limit reached", "type": "requests"}),
        Reply(content='{"ok": 1}'),
    )
    result = await make_llm(llm_max_retries=2).complete(MESSAGES, max_tokens=50)
    assert result.text == '{"ok": 1}'
    assert len(fake.requests) == 2


async def test_500_storm_becomes_one_sentence_after_the_retries(make_llm, fake):
    fake.responder = lambda req: Reply(
        status=500, headers={"retry-after-ms": "10"}, error={"message": "The server had an error"}
    )
    with pytest.raises(LLMError) as caught:
        await make_llm(llm_max_retries=2).complete(MESSAGES, max_tokens=50)
    assert str(caught.value) == "The LLM endpoint answered HTTP 500 after 2 retries (The server had an error)."
    assert len(fake.requests) == 3


async def test_timeout_becomes_one_sentence(make_llm, fake):
    fake.responder = lambda req: Reply(hang=True)
    with pytest.raises(LLMError) as caught:
        await make_llm(llm_timeout=0.2, llm_max_retries=0).complete(MESSAGES, max_tokens=50)
    assert str(caught.value) == "The LLM request timed out after 0.2 s."


async def test_unreachable_endpoint_names_host_but_no_credentials(make_settings):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = LLM(
        make_settings(
            openai_base_url=f"http://alice:hunter2@127.0.0.1:{port}/v1",
            openai_api_key=KEY,
            llm_max_retries=0,
            llm_timeout=2,
        )
    )
    with pytest.raises(LLMError) as caught:
        await llm.complete(MESSAGES, max_tokens=10)
    message = str(caught.value)
    assert message == f"The LLM endpoint at 127.0.0.1:{port} could not be reached."
    assert "hunter2" not in message and "alice" not in message


async def test_api_key_never_appears_in_errors_or_logs(make_llm, fake, caplog):
    caplog.set_level(logging.DEBUG)
    # An endpoint that echoes the whole key back in its error message (OpenAI masks it; others may not).
    fake.responder = script(
        Reply(
            status=401,
            error={
                "message": f"Incorrect API key provided: {KEY}.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            },
        ),
        Reply(status=503, headers={"retry-after-ms": "10"}, error={"message": f"overloaded (key {KEY})"}),
    )
    llm = make_llm(llm_max_retries=1)
    errors = []
    for _ in range(2):
        with pytest.raises(LLMError) as caught:
            await llm.complete(MESSAGES, max_tokens=10)
        errors.append(str(caught.value))
    assert errors[0] == "The LLM endpoint answered HTTP 401 (Incorrect API key provided: [REDACTED])."
    assert errors[1].startswith("The LLM endpoint answered HTTP 503 after 1 retry")
    assert all(KEY not in e for e in errors)
    assert KEY not in caplog.text
    assert "HTTP 503" in caplog.text  # the failure itself is logged


async def test_keyless_local_server_works(make_settings, fake):
    llm = LLM(make_settings(openai_base_url=fake.url))
    result = await llm.complete(MESSAGES, max_tokens=10)
    assert result.finish_reason == "stop"
    assert fake.request_headers[0]["authorization"].startswith("Bearer ")


async def test_concurrency_never_exceeds_the_setting(make_llm, fake):
    fake.latency = 0.05
    llm = make_llm(llm_concurrency=3)
    results = await asyncio.gather(*(llm.complete(MESSAGES, max_tokens=10) for _ in range(12)))
    assert len(results) == 12 and len(fake.requests) == 12
    assert 2 <= fake.peak_concurrency <= 3


async def test_server_side_cap_answers_429_and_the_sdk_retries(make_llm):
    capped = FakeOpenAI(latency=0.05, max_concurrent=2, over_cap="reject", retry_after=0.02).start()
    try:
        llm = make_llm(openai_base_url=capped.url, llm_concurrency=4, llm_max_retries=10)
        # (plain text: the first JSON-mode request at an untried format would go alone)
        results = await asyncio.gather(*(llm.complete(MESSAGES, max_tokens=10, json_mode=False) for _ in range(4)))
    finally:
        capped.stop()
    assert all(r.finish_reason == "stop" for r in results)
    assert capped.rejected >= 1
    assert len(capped.requests) == 4 + capped.rejected


async def test_streams_and_completions_share_the_bound(make_llm, fake):
    fake.responder = lambda req: (
        Reply(chunks=["a", "b", "c"], chunk_delay=0.02) if req.get("stream") else Reply(content="{}", delay=0.02)
    )
    llm = make_llm(llm_concurrency=1)

    async def read_stream() -> str:
        return "".join([piece async for piece in llm.stream(MESSAGES, max_tokens=10)])

    outcome = await asyncio.gather(
        read_stream(), llm.complete(MESSAGES, max_tokens=10), read_stream(), llm.complete(MESSAGES, max_tokens=10)
    )
    assert outcome[0] == outcome[2] == "abc"
    assert fake.peak_concurrency == 1


async def test_stream_yields_deltas_in_order(make_llm, fake):
    pieces = ["The ", "commit ", "adds ", "a ", "流式", " answer", "."]
    fake.responder = lambda req: Reply(chunks=pieces, chunk_delay=0.005)
    fake.first_token_delay = 0.02
    got = [piece async for piece in make_llm().stream(MESSAGES, max_tokens=100)]
    assert got == pieces
    assert fake.requests[0]["stream"] is True
    assert "response_format" not in fake.requests[0]


async def test_stream_failure_is_an_llm_error(make_llm, fake):
    fake.responder = lambda req: Reply(status=502, headers={"retry-after-ms": "10"}, error={"message": "Bad gateway"})
    with pytest.raises(LLMError) as caught:
        async for _ in make_llm(llm_max_retries=1).stream(MESSAGES, max_tokens=10):
            pass
    assert str(caught.value) == "The LLM endpoint answered HTTP 502 after 1 retry (Bad gateway)."


async def test_abandoned_stream_releases_its_slot(make_llm, fake):
    fake.responder = lambda req: Reply(chunks=["x"] * 5) if req.get("stream") else Reply(content="{}")
    llm = make_llm(llm_concurrency=1)
    stream = llm.stream(MESSAGES, max_tokens=10)
    assert await stream.__anext__() == "x"
    await stream.aclose()
    result = await asyncio.wait_for(llm.complete(MESSAGES, max_tokens=10), timeout=5)
    assert json.loads(result.text) == {}


# --- endpoints as they behave in the wild -------------------------------------------------------

from bot.analysis.llm import ContextLengthError  # noqa: E402
from bot.analysis.reasoning import ReasoningFilter  # noqa: E402
from tests.fakes.openai_server import CONTEXT_WORDINGS, Behaviour  # noqa: E402

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}


def test_reasoning_never_reaches_the_reader_wherever_the_stream_splits():
    streamed = '<think>plan {a} </thin k> {"x": 1}</think>The answer <b>is</b> 42.<thinking>more</thinking>!'
    for cut in range(len(streamed) + 1):
        for second in range(cut, len(streamed) + 1):
            f = ReasoningFilter()
            shown = f.feed(streamed[:cut]) + f.feed(streamed[cut:second]) + f.feed(streamed[second:]) + f.flush()
            assert shown == "The answer <b>is</b> 42.!", (cut, second, shown)


def test_an_unclosed_reasoning_block_stays_hidden():
    f = ReasoningFilter()
    assert f.feed("Hello <thi") == "Hello "
    assert f.feed("nk>still thinking") == ""
    assert f.flush() == ""


@pytest.mark.parametrize("wording", list(CONTEXT_WORDINGS))
async def test_context_length_errors_teach_the_window_and_the_tokenizer(make_llm, fake, wording):
    fake.responder = Behaviour("context", window=2048, wordings=[wording])
    llm = make_llm()
    long = [{"role": "user", "content": "汉字 and words " * 300}]
    with pytest.raises(ContextLengthError) as caught:
        await llm.complete(long, max_tokens=1500)
    assert caught.value.window == 2048 and llm.context_tokens == 2048
    assert "context window (2,048 tokens)" in str(caught.value)
    assert llm.token_ratio > 1  # the server counts Chinese higher than the local estimate
    # the next request asks only for output that fits, and a prompt sized by the corrected estimate fits
    assert llm.output_reserve(1500) <= 2048 // 2
    fits = [{"role": "user", "content": "汉字 and words " * 20}]
    assert llm.estimate(fits) <= llm.prompt_budget(1500)
    await llm.complete(fits, max_tokens=1500)
    assert fake.requests[-1]["max_tokens"] <= 2048 - llm.estimate(fits)


async def test_the_configured_window_is_respected_from_the_first_request(make_llm, fake):
    llm = make_llm(llm_context_tokens=4096)
    assert llm.output_reserve(1024) == 1024  # what an analysis needs, not a third of the window
    assert llm.prompt_budget(1024) == int((4096 - 1024 - 256) / (1 + RATIO_SLACK))  # texts count differently


async def test_usage_prompt_tokens_calibrate_the_estimate(make_llm, fake):
    llm = make_llm()
    await llm.complete([{"role": "user", "content": "这是一个很长的中文问题" * 50}], max_tokens=50)
    assert llm.token_ratio > 1  # the fake counts 1.5 tokens per Chinese character


async def test_a_timed_out_request_is_sent_twice_at_most(make_llm, fake):
    fake.responder = lambda req: Reply(hang=True)
    with pytest.raises(LLMError) as caught:
        await make_llm(llm_timeout=0.3, llm_max_retries=4).complete(MESSAGES, max_tokens=50)
    assert str(caught.value) == "The LLM request timed out after 0.3 s and once more."
    assert caught.value.kind == "timeout"
    assert len(fake.requests) == 2


async def test_after_consecutive_failures_the_endpoint_is_not_asked_again(make_llm, fake):
    fake.responder = lambda req: Reply(status=503, error={"message": "overloaded"})
    llm = make_llm(llm_max_retries=0)
    for _ in range(3):
        with pytest.raises(LLMError):
            await llm.complete(MESSAGES, max_tokens=50)
    asked = len(fake.requests)
    with pytest.raises(LLMError) as caught:
        await llm.complete(MESSAGES, max_tokens=50)
    assert len(fake.requests) == asked == 3
    assert "HTTP 503" in str(caught.value) and "not asked again after 3 failures in a row" in str(caught.value)


@pytest.mark.parametrize(
    "behaviour,sent",
    [
        ("refuse_400", ["json_schema", "json_object+schema", "json_object", "json_object"]),
        ("refuse_422", ["json_schema", "json_object+schema", "json_object", None, None]),
        ("llamacpp_500", ["json_schema", "json_object+schema", "json_object+schema"]),
        ("schema_only", ["json_schema", "json_schema"]),
    ],
)
async def test_structured_output_steps_down_once_per_refused_format(make_llm, fake, behaviour, sent):
    fake.responder = Behaviour(behaviour)
    llm = make_llm(llm_max_retries=3)
    for _ in range(2):
        await llm.complete(MESSAGES, max_tokens=50, schema=SCHEMA)

    def form(r):
        fmt = r.get("response_format")
        return (
            None
            if not fmt
            else "json_object+schema"
            if "schema" in fmt and fmt["type"] == "json_object"
            else fmt["type"]
        )

    assert [form(r) for r in fake.requests] == sent  # a 500 naming the format is no outage: not retried
    if behaviour != "schema_only":
        assert fake.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA


async def test_a_burst_learns_a_refusal_from_one_request(make_llm, fake):
    fake.responder = Behaviour("refuse_422")
    llm = make_llm(llm_concurrency=8)
    await asyncio.gather(*(llm.complete(MESSAGES, max_tokens=50, schema=SCHEMA) for _ in range(8)))
    refused = [r for r in fake.requests if r.get("response_format")]
    assert len(refused) == 3  # json_schema, json_object+schema, json_object: each sent once


def test_a_stream_that_starts_inside_a_template_opened_block_is_held_until_it_closes():
    streamed = "I should look at {the diff} first.</think>The answer is 42."
    for cut in range(len(streamed) + 1):
        f = ReasoningFilter(pre_opened=True)
        assert f.feed(streamed[:cut]) + f.feed(streamed[cut:]) + f.flush() == "The answer is 42.", cut
    f = ReasoningFilter(pre_opened=True)  # no reasoning this time: nothing is lost
    assert f.feed("A plain ") + f.feed("answer.") + f.flush() == "A plain answer."


async def test_an_endpoint_whose_template_opens_the_block_is_learnt_from_an_answer(make_llm, fake):
    fake.responder = script(
        Reply(content='Let me think {draft}.</think>{"ok": 1}'),
        Reply(chunks=["Reasoning about ", "{x}.</thi", "nk>Visible ", "answer."]),
    )
    llm = make_llm()
    await llm.complete(MESSAGES, max_tokens=50)
    shown = [piece async for piece in llm.stream(MESSAGES, max_tokens=50)]
    assert "".join(shown) == "Visible answer."
