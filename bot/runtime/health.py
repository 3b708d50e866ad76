"""Whether workers and clocks are alive, kept in Redis so it can be asked from anywhere.

A worker's arq poll loop writes arq's health-check key, one per worker
(`{prefix}jobs:health:{worker id}`), every `report_every` seconds with a time-to-live one second
longer: the key exists exactly while that worker polls the queue. A clock writes
`{prefix}clock:health:{clock id}` after every tick it completed, living three intervals (and ten
seconds for a slow tick). `python -m bot health worker|clock` reads them (exit 0 when at least one
is alive, 1 when none is), and each process's `/healthz` on METRICS_PORT checks its own key.
"""

from __future__ import annotations

import math
import time

from settings import Settings

KINDS = ("worker", "clock")


def report_every(settings: Settings) -> float:
    """Seconds between a worker's health reports: within its job lease, at most 10."""
    return min(10.0, settings.job_lease)


def key(prefix: str, kind: str, ident: str) -> str:
    return f"{prefix}jobs:health:{ident}" if kind == "worker" else f"{prefix}clock:health:{ident}"


def clock_ttl(settings: Settings) -> int:
    return math.ceil(3 * settings.clock_interval) + 10


def horizon(settings: Settings, kind: str) -> int:
    """How old (seconds) the newest report may be for its process to count as alive."""
    return math.ceil(report_every(settings)) + 1 if kind == "worker" else clock_ttl(settings)


async def clock_beat(store, settings: Settings, ident: str) -> None:
    await store.set_json(key(store.prefix, "clock", ident), {"ticked": time.time()}, ttl=clock_ttl(settings))


async def is_alive(store, kind: str, ident: str) -> bool:
    return bool((await store.exists_each([key(store.prefix, kind, ident)]))[0])


async def alive(store, kind: str) -> dict[str, str]:
    """Every live process of `kind` on this Redis and key prefix → what it last reported."""
    pattern = key(store.prefix, kind, "*")
    found: dict[str, str] = {}
    async for raw in store.r.scan_iter(match=pattern, count=500):
        name = raw.decode() if isinstance(raw, bytes) else raw
        value = await store.r.get(name)
        if value is not None:
            found[name[len(pattern) - 1 :]] = value.decode(errors="replace")
    return found


async def platform_states(store) -> list[dict]:
    """What chat platforms said about themselves, e.g. a Feishu store app waiting for its
    app_ticket: `{prefix}health:platform:{name}` = {ok, phrase (a catalogue key), fields, since}."""
    states = []
    async for raw in store.r.scan_iter(match=store.k("health", "platform", "*"), count=100):
        name = raw.decode() if isinstance(raw, bytes) else raw
        found = await store.get_json(name)
        if isinstance(found, dict) and isinstance(found.get("phrase"), str):
            states.append(found)
    return states


def _platforms_report(states: list[dict]) -> int:
    """One line per platform state; exit 1 when one is not ready (none reported: 0, nothing to wait for)."""
    import sys

    from ..i18n import text

    now = time.time()
    for state in states:
        fields = {**(state.get("fields") or {}), "seconds": round(now - float(state.get("since") or now))}
        print(text("en", state["phrase"], **fields), file=sys.stdout if state.get("ok") else sys.stderr)
    return 0 if all(state.get("ok") for state in states) else 1


async def health_command(args, settings: Settings) -> int:
    """`python -m bot health worker|clock`: one line; exit 0 when one is alive, 1 when none is.
    `health platforms`: what each chat platform is waiting for, if anything (exit 1 when waiting)."""
    import json
    import sys

    from ..core.store import open_store
    from ..i18n import text

    store = open_store(settings)
    try:
        if args.kind == "platforms":
            return _platforms_report(await store._call(platform_states, store))
        found = await store._call(alive, store, args.kind)
    finally:
        await store.close()
    if not found:
        print(
            text("en", "ops.health_none", kind=args.kind, prefix=store.prefix, seconds=horizon(settings, args.kind)),
            file=sys.stderr,
        )
        return 1
    if args.kind == "clock":
        now = time.time()
        found = {
            ident: text("en", "ops.clock_ticked", seconds=round(now - json.loads(info)["ticked"]))
            for ident, info in found.items()
        }
    details = "; ".join(f"{ident}: {info}" for ident, info in sorted(found.items()))
    print(text("en", "ops.health_alive", kind=args.kind, count=len(found), details=details))
    return 0
