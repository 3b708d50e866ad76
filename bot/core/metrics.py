"""Operational counters, the only prometheus_client importer.

Code anywhere in the bot calls `count(...)`, `observe(...)` or `gauge(...)` with a metric name from
METRICS below; the web process serves them at `/metrics` (`exposition()`). Names and label sets
are declared once here so a typo fails at once instead of creating a new series.
"""

from __future__ import annotations

from typing import TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

REGISTRY = CollectorRegistry(auto_describe=True)

_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)

METRICS = {
    # jobs (queued / started / succeeded / failed / retried), by kind: digest, deliver, command …
    "jobs": Counter("digestbot_jobs_total", "Jobs by kind and event.", ["kind", "event"], registry=REGISTRY),
    "job_seconds": Histogram(
        "digestbot_job_seconds", "Job run time.", ["kind"], registry=REGISTRY, buckets=_LATENCY_BUCKETS
    ),
    "jobs_in_queue": Gauge("digestbot_jobs_in_queue", "Jobs waiting in the queue.", registry=REGISTRY),
    "jobs_running": Gauge("digestbot_jobs_running", "Jobs running in this process.", registry=REGISTRY),
    # the LLM
    "llm_calls": Counter(
        "digestbot_llm_calls_total", "LLM requests by purpose and outcome.", ["purpose", "outcome"], registry=REGISTRY
    ),
    "llm_tokens": Counter(
        "digestbot_llm_tokens_total",
        "Tokens reported by the endpoint: in (prompt), out (completion).",
        ["direction"],
        registry=REGISTRY,
    ),
    "digest_tokens": Histogram(
        "digestbot_digest_tokens",
        "LLM tokens (in + out) one digest's build cost.",
        registry=REGISTRY,
        buckets=(0, 1e3, 5e3, 1e4, 5e4, 1e5, 2.5e5, 5e5, 1e6, 5e6),
    ),
    "llm_tokens_month": Gauge(
        "digestbot_llm_tokens_month", "LLM tokens the deployment spent this calendar month (UTC).", registry=REGISTRY
    ),
    "llm_seconds": Histogram(
        "digestbot_llm_seconds", "LLM request latency.", ["purpose"], registry=REGISTRY, buckets=_LATENCY_BUCKETS
    ),
    "llm_rejections": Counter(
        "digestbot_llm_rejections_total", "LLM answers rejected, by reason.", ["reason"], registry=REGISTRY
    ),
    "llm_fallbacks": Counter(
        "digestbot_llm_fallbacks_total",
        "Commits that fell back to the offline analysis.",
        ["reason"],
        registry=REGISTRY,
    ),
    # caches and shared work
    "cache": Counter(
        "digestbot_cache_total",
        "Cache look-ups by cache and result (hit, miss, shared).",
        ["cache", "result"],
        registry=REGISTRY,
    ),
    # deliveries into conversations
    "deliveries": Counter(
        "digestbot_deliveries_total",
        "Digest deliveries by platform and outcome.",
        ["platform", "outcome"],
        registry=REGISTRY,
    ),
    "messages": Counter("digestbot_messages_total", "Messages posted, by platform.", ["platform"], registry=REGISTRY),
    # sources
    "github_requests": Counter(
        "digestbot_github_requests_total", "GitHub API requests by kind.", ["kind"], registry=REGISTRY
    ),
    "github_rate_remaining": Gauge(
        "digestbot_github_rate_limit_remaining", "GitHub rate limit remaining, as last reported.", registry=REGISTRY
    ),
    "gitlab_requests": Counter(
        "digestbot_gitlab_requests_total", "GitLab API calls (each may page).", registry=REGISTRY
    ),
    # secrets withheld from the LLM
    "redactions": Counter(
        "digestbot_redactions_total", "Secrets withheld from the LLM, by kind.", ["kind"], registry=REGISTRY
    ),
}


_M = TypeVar("_M", Counter, Gauge, Histogram)


def _series(name: str, kind: type[_M], labels: dict[str, str]) -> _M:
    metric = METRICS[name]
    if not isinstance(metric, kind):  # a counter name passed to gauge(): say which, not "no attribute"
        raise TypeError(f"metric {name} is a {type(metric).__name__}, not a {kind.__name__}")
    return metric.labels(**labels) if labels else metric


def count(name: str, amount: float = 1, **labels: str) -> None:
    _series(name, Counter, labels).inc(amount)


def observe(name: str, value: float, **labels: str) -> None:
    _series(name, Histogram, labels).observe(value)


def gauge(name: str, value: float, **labels: str) -> None:
    _series(name, Gauge, labels).set(value)


def total(name: str, **labels: str) -> float:
    """A counter's value now (0 before its first count): a run measures its own share as a
    difference (the eval card's tokens and requests)."""
    for family in METRICS[name].collect():
        for sample in family.samples:
            if sample.name.endswith("_total") and sample.labels == labels:
                return sample.value
    return 0.0


def exposition() -> tuple[bytes, str]:
    """The Prometheus text format of every metric, and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
