"""`python -m bot backup FILE` and `python -m bot restore FILE` as an operator runs them: real
processes on real Redis servers. A restored bot posts nothing it had posted and keeps its readers'
corrections and its threads (through the real Slack adapter and the fake Slack); types and TTLs
survive; a wrong, truncated, edited or newer file — and a non-empty or half-restored Redis — gets
one sentence and changes nothing; a password in REDIS_URL is never echoed."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import redis

from bot.backup import file_format
from bot.delivery.spec import scheduled_spec
from bot.render import slack as R
from bot.runtime.queue import Jobs
from tests.shared.redis_proc import RedisProcess, free_port
from tests.shared.slack import CHANNEL, LOW_TITLE, MEDIUM_TITLE, buttons, by_title, digest_thread, shown

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai: the 28th's push is due
DAY = date(2026, 1, 28)


@pytest.fixture
def fresh(tmp_path):
    """A second, empty Redis server: where a backup is restored."""
    server = RedisProcess(free_port(), tmp_path)
    server.start()
    server.url = f"redis://127.0.0.1:{server.port}/0"  # type: ignore[attr-defined]
    server.client = redis.Redis(port=server.port)  # type: ignore[attr-defined]
    yield server
    server.client.close()
    server.stop()


def cli(redis_url: str, prefix: str, *args: str, stdin: bytes | None = None, cwd: Path = ROOT):
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "REDIS_"))
    }
    env.update({"REDIS_URL": redis_url, "REDIS_PREFIX": prefix, "DEFAULT_LANG": "en", "PYTHONPATH": str(ROOT)})
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], input=stdin, capture_output=True, env=env, cwd=cwd, timeout=120
    )


def one_line(done) -> str:
    err = done.stderr.decode()
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def keys_of(client, prefix: str) -> list[bytes]:
    return sorted(client.scan_iter(match=prefix + "*"))


# --- end to end: nothing posted twice, nothing forgotten --------------------------------------------


async def test_a_restored_bot_posts_nothing_again_and_keeps_corrections_and_threads(
    make_bot, slack, widgets, run, redis_url, fresh, tmp_path
):
    bot = await make_bot(redis_prefix=run.prefix)
    assert (await bot.sender.slash("subscribe acme/widgets"))[0] == 200
    await bot.settle()
    (sub,) = await bot.chat.subs.all()
    assert await bot.chat.deliveries.run(scheduled_spec(bot.services.store, sub, DAY)) == "delivered"
    parent = slack.top_level(CHANNEL)[-1]
    assert "2026-01-28" in shown(parent)
    medium = by_title(slack.replies(CHANNEL, parent.ts), MEDIUM_TITLE)
    button = buttons(medium)["digest_level_too_high"]
    status, _ = await bot.sender.block_action(
        "digest_level_too_high", value=button["value"], user="U0ANA", message_ts=medium.ts, thread_ts=parent.ts
    )
    assert status == 200
    await bot.settle()

    file = tmp_path / "bot.backup"
    taken = cli(redis_url, run.prefix, "backup", str(file))
    assert taken.returncode == 0 and one_line(taken).startswith(f"Backup written to {file}: ")
    restored = cli(fresh.url, run.prefix, "restore", str(file))
    assert restored.returncode == 0 and one_line(restored).startswith("Restored ")

    again = await make_bot(redis_prefix=run.prefix, redis_url=fresh.url)
    posts = len(slack.calls_to("chat.postMessage"))
    # the clock at the push's time finds it delivered; a worker running the same push does too
    jobs = await Jobs.connect(again.chat.settings)
    try:
        ticked = await again.chat.make_clock(now=lambda: NOW, jobs=jobs).tick()
        assert [outcome for _, _, outcome in ticked] == ["already delivered"]
        queued = [j.decode() for j in await jobs.pool.zrange(jobs.queue, 0, -1)]
        assert not [j for j in queued if ":deliver:" in j], queued  # (a build may be queued: caches are not kept)
    finally:
        await jobs.close()
    (sub,) = await again.chat.subs.all()
    assert await again.chat.deliveries.run(scheduled_spec(again.services.store, sub, DAY)) == "already delivered"
    await again.settle()
    assert len(slack.calls_to("chat.postMessage")) == posts  # the fake Slack received nothing new

    # the correction: the day's digest asked for again shows the medium commit as low, and who said so
    parent2, replies2 = await digest_thread(again, slack)
    assert "🟡 medium 0 | 🟢 low 2" in shown(parent2)
    low = by_title(replies2, LOW_TITLE)
    assert MEDIUM_TITLE in shown(low) and "Level corrected to 🟢 Low by <@U0ANA> (was 🟡 Medium)" in shown(low)

    # the thread: a question in the first digest's thread is answered there, about its commit
    ask = again.sender.message_event(
        f"<@UBOT> what does {widgets.shas['high'][:7]} break?", kind="app_mention", thread_ts=parent.ts
    )
    assert (await again.sender.event(ask))[0] == 200
    await again.settle()
    answers = [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed]
    assert answers and "export_v1" in R.unescape(answers[-1].text)


# --- what is kept, as it was ----------------------------------------------------------------------


def seed(client, prefix: str) -> None:
    client.hset(prefix + "subs", mapping={"slack:C1:acme/app": '{"repo":"acme/app"}', "slack:C2:acme/app": "{}"})
    client.set(prefix + "report:AbCdEf0123456789", gzip.compress(b"\x00\xff binary"), ex=5000)
    client.sadd(prefix + "alerthour:slack:C1:acme/app:2026012801:alerted", "a" * 40, "b" * 40)
    client.expire(prefix + "alerthour:slack:C1:acme/app:2026012801:alerted", 7200)
    client.rpush(prefix + "history:slack:C1:1.2", '{"role":"user","text":"你好"}', '{"role":"bot","text":"hi"}')
    client.zadd(prefix + "zz:someone-elses:zset", {"m1": 1.5, "m2": 2})  # no family: kept, not lost
    client.xadd(prefix + "zz:someone-elses:stream", {"f": "v"}, id="1-1")
    client.set(prefix + "ledger:slack:C1:acme/app:2026-01-28", '{"at":"x"}', ex=86400)
    client.set(prefix + "analysis:acme/app:abc:tag:en", "{}")  # a cache: left out
    client.set(prefix + "delivery:slack:C1:acme/app:2026-01-28:lock", "owner", ex=30)  # a lease: left out


def snapshot(client, prefix: str) -> dict:
    out = {}
    for key in keys_of(client, prefix):
        kind = client.type(key).decode()
        value = {
            "string": client.get,
            "hash": client.hgetall,
            "set": lambda k: sorted(client.smembers(k)),
            "zset": lambda k: client.zrange(k, 0, -1, withscores=True),
            "list": lambda k: client.lrange(k, 0, -1),
            "stream": lambda k: client.xrange(k),
        }[kind](key)
        out[key[len(prefix) :].decode()] = (kind, value, client.ttl(key))
    return out


def test_types_values_and_ttls_survive_through_stdout_and_stdin(run, redis_url, redis_server, fresh):
    seed(redis_server, run.prefix)
    started = time.monotonic()
    taken = cli(redis_url, run.prefix, "backup", "-")
    assert taken.returncode == 0 and taken.stdout.startswith(file_format.GZIP_MAGIC)
    header = json.loads(gzip.decompress(taken.stdout).split(b"\n", 1)[0])
    assert header["format"] == "digest-bot-backup" and header["version"] == 1 and header["keys"] == 7
    assert header["data_version"] == 1 and header["prefix"] == run.prefix and header["created"].endswith("+00:00")
    restored = cli(fresh.url, run.prefix, "restore", "-", stdin=taken.stdout)
    assert restored.returncode == 0, restored.stderr
    before, after = snapshot(redis_server, run.prefix), snapshot(fresh.client, run.prefix)
    # A TTL is restored as it was when the backup read it; the original has run on since: by at
    # most the seconds between the backup and now (more than 2 on a busy machine).
    elapsed = time.monotonic() - started
    assert "analysis:acme/app:abc:tag:en" not in after and "delivery:slack:C1:acme/app:2026-01-28:lock" not in after
    assert after.pop("meta:data-version") == ("string", b"1", -1)
    kept = {k: v for k, v in before.items() if not k.startswith(("analysis:", "delivery:", "meta:"))}
    assert {k: v[:2] for k, v in after.items()} == {k: v[:2] for k, v in kept.items()}
    for key, (_kind, _value, ttl) in kept.items():
        assert (ttl == -1) == (after[key][2] == -1) and -1 <= after[key][2] - ttl <= elapsed + 1, key


# --- refusals: one sentence, nothing changed ------------------------------------------------------


def good_file(prefix: str, data_version: int = 1, items=None) -> bytes:
    items = items if items is not None else [("subs", "hash", -1, {b"slack:C1:x": b"{}"})]
    return file_format.encode(
        items, prefix=prefix, data_version=data_version, bot_version="test", created=datetime.now(UTC)
    )


def rewritten(raw: bytes, header_change=None, body_change=None, fix_checksum=True) -> bytes:
    head, _, body = gzip.decompress(raw).partition(b"\n")
    header = json.loads(head)
    body = body_change(body) if body_change else body
    if header_change:
        header.update(header_change)
    if fix_checksum:
        header["sha256"] = hashlib.sha256(body).hexdigest()
    return gzip.compress(json.dumps(header).encode() + b"\n" + body)


CASES = {
    "a JSON file": (lambda p: b'{"subs": {}}', "{path} is not a digest-bot backup file."),
    "a gzip of something else": (
        lambda p: gzip.compress(b'{"format": "other"}\n{}\n'),
        "{path} is not a digest-bot backup file.",
    ),
    "a truncated backup": (lambda p: good_file(p)[:-20], "{path} is damaged or truncated: it cannot be restored."),
    "an edited backup": (
        lambda p: rewritten(good_file(p), body_change=lambda b: b.replace(b"C1", b"C9"), fix_checksum=False),
        "{path} does not match its own checksum (truncated or edited): it cannot be restored.",
    ),
    "a newer format": (
        lambda p: rewritten(good_file(p), {"version": 2}),
        "{path} was written by a newer bot (backup format 2; this bot reads up to 1): "
        "restore it with that version or later.",
    ),
    "a malformed record": (
        lambda p: rewritten(good_file(p), body_change=lambda b: b'{"k":"subs","t":"hash","ttl":-1,"v":5}\n'),
        "{path} has a malformed key record on line 2: it cannot be restored.",
    ),
    "newer data": (
        lambda p: good_file(p, data_version=9),
        "error: The data is of format version 9, newer than this bot's 1: "
        "run a bot at least as new as the one that wrote it.",
    ),
    "another deployment's prefix": (
        lambda p: good_file("other:"),
        "error: The backup was taken with REDIS_PREFIX=other:, but this bot uses {prefix}: "
        "set REDIS_PREFIX=other: to restore it.",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_wrong_file_gets_one_sentence_and_changes_nothing(case, run, redis_url, redis_server, tmp_path):
    make, said = CASES[case]
    file = tmp_path / "the.backup"
    file.write_bytes(make(run.prefix))
    done = cli(redis_url, run.prefix, "restore", str(file))
    expected = said.format(path=file, prefix=run.prefix)
    assert done.returncode == 2 and one_line(done) == (
        expected if expected.startswith("error:") else f"error: {expected}"
    )
    assert keys_of(redis_server, run.prefix) == []


def test_a_missing_file_and_an_unwritable_one(run, redis_url, tmp_path):
    done = cli(redis_url, run.prefix, "restore", str(tmp_path / "nope"))
    assert done.returncode == 2 and one_line(done) == f"error: No backup file at {tmp_path / 'nope'}."
    done = cli(redis_url, run.prefix, "backup", str(tmp_path / "no-such-folder" / "b"))
    assert done.returncode == 2 and "does not exist" in one_line(done)


def test_a_redis_with_the_bots_data_is_refused_unless_forced(run, redis_url, redis_server, tmp_path):
    file = tmp_path / "b"
    file.write_bytes(good_file(run.prefix, items=[("subs", "hash", -1, {b"slack:C1:from-file": b"{}"})]))
    redis_server.hset(run.prefix + "subs", "slack:C1:already-here", "{}")
    redis_server.hset(run.prefix + "watches", "slack:U1:x:y", "{}")
    redis_server.set(run.prefix + "analysis:x:y:z:en", "{}")  # a cache
    redis_server.set("arq:job:" + run.prefix + "deliver:x", "{}")  # this deployment's queued job
    done = cli(redis_url, run.prefix, "restore", str(file))
    assert done.returncode == 2 and one_line(done) == (
        f"error: This Redis already holds the bot's data (2 keys under {run.prefix}): restore into an empty one, "
        "or add --force to delete that data first and replace it with the file's."
    )
    assert redis_server.hkeys(run.prefix + "subs") == [b"slack:C1:already-here"]

    done = cli(redis_url, run.prefix, "restore", "--force", str(file))
    assert done.returncode == 0, done.stderr
    assert redis_server.hkeys(run.prefix + "subs") == [b"slack:C1:from-file"]
    assert keys_of(redis_server, run.prefix) == sorted(
        [(run.prefix + k).encode() for k in ("subs", "meta:data-version")]
    )
    assert not redis_server.exists("arq:job:" + run.prefix + "deliver:x")


def test_an_interrupted_restore_stops_every_process_and_running_it_again_finishes_it(
    run, redis_url, redis_server, tmp_path
):
    file = tmp_path / "b"
    file.write_bytes(good_file(run.prefix))
    redis_server.set(run.prefix + "meta:restoring", '{"sha256":"…"}')  # written first, removed last
    redis_server.hset(run.prefix + "watches", "half:of:it", "{}")  # what the interrupted one wrote
    for args in (("backup", "-"), ("clock",)):
        done = cli(redis_url, run.prefix, *args)
        assert done.returncode == 1 and one_line(done) == (
            "error: A restore into this Redis was interrupted and its data is partial: "
            "run `python -m bot restore FILE` again."
        )
    done = cli(redis_url, run.prefix, "restore", str(file))  # no --force needed: it is known to be partial
    assert done.returncode == 0, done.stderr
    assert not redis_server.exists(run.prefix + "meta:restoring") and not redis_server.exists(run.prefix + "watches")
    assert redis_server.hkeys(run.prefix + "subs") == [b"slack:C1:x"]


def test_a_password_in_redis_url_is_never_echoed(run, tmp_path):
    url = f"redis://:hunter2-secret@127.0.0.1:{free_port()}/0"
    file = tmp_path / "b"
    file.write_bytes(good_file(run.prefix))
    for args in (("backup", str(tmp_path / "out")), ("restore", str(file))):
        done = cli(url, run.prefix, *args)
        assert done.returncode == 1 and "hunter2" not in one_line(done), done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()
