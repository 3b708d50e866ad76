"""Every family of Redis keys the bot writes, and whether a backup holds it.

A key is named by `Store.k(...)`: REDIS_PREFIX, then its parts joined by ":". The first parts
name its family; `FAMILIES` below lists every family, first match wins (a family's locks and
attempt counters are listed before the family itself). Each family is one of:

- BACKUP: what the bot cannot make again — who subscribed, what was said and posted, what was
  corrected, what was already delivered (without the ledgers a restored bot would post a day's
  digest again). Kept with its type and remaining TTL.
- CACHE: what the bot makes again from the repositories and the model when it is missing
  (analyses, files, digests, learned profiles): left out, a restored bot rebuilds them on demand.
- TRANSIENT: locks, leases, attempt counters, event de-duplication, health beacons, the job
  queue: they describe processes running now, which a restored Redis does not have.
- META: the data format version (the backup file's header carries it).

Decisions worth saying: the learned profiles (`taste2*`) are a cache — a day's profile is learnt
again from the repository's history and the kept corrections in a second or two of CPU, off every
reader's path, and a profile is a pure function of both. The month's LLM token count
(`llm:tokens`, and each workspace's `llm:tokens:ws:*`) is kept: without it a restored deployment
could spend its monthly budget twice.
Published report pages (`report:{id}`) are kept: posted digests link to them by a random id that
cannot be made again. Queued jobs are not kept: a scheduled push is queued again by the clock
(and its ledger says whether it was delivered); a request still queued when the backup was taken
is lost, as docs/operations.md says.

tests/test_backup_keys.py fails when the code writes a key no family here describes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from fnmatch import fnmatchcase


class Kind(Enum):
    BACKUP = "backup"
    CACHE = "cache"
    TRANSIENT = "transient"
    META = "meta"


@dataclass(frozen=True)
class Family:
    pattern: str  # fnmatch pattern over the key after REDIS_PREFIX (`*` spans ":")
    kind: Kind
    why: str


B, C, T, M = Kind.BACKUP, Kind.CACHE, Kind.TRANSIENT, Kind.META

DATA_VERSION = "meta:data-version"
MIGRATING = "meta:migrating"
RESTORING = "meta:restoring"

FAMILIES: tuple[Family, ...] = (
    # --- the format version, and the restore / migration in progress
    Family(DATA_VERSION, M, "the data format version; the backup file's header carries it"),
    Family(MIGRATING, T, "the lock of a migration running now"),
    Family(RESTORING, T, "marks a restore in progress (an interrupted one is found by it)"),
    # --- locks, leases, attempt counters (first: their families are kept)
    Family("delivery:*:lock", T, "a delivery's lease, held by a running worker"),
    Family("attempts:*", T, "a scheduled delivery's failed attempts, counted for its retries"),
    Family("watchrun:*:attempts", T, "a watch run's failed attempts"),
    Family("alertpoll:*:attempts", T, "an alert poll's failed attempts"),
    Family("watchlock:*", T, "a person's watch runs' lease"),
    Family("alertlock:*", T, "a subscription's alert polls' lease"),
    Family("ondemand:*", T, "an on-demand digest's progress; its request (a queued job) is not kept"),
    Family("event:*", T, "platform events seen (de-duplication for hours)"),
    Family("report:tap:*", T, "report form nonces seen (a form sent twice records once)"),
    Family("jobs:*", T, "the queue's running jobs, workers and their health beacons"),
    Family("clock:health:*", T, "a clock's health beacon"),
    Family("slack:install:*:refresh", T, "a Slack workspace's token refresh lock"),
    Family("slack:oauth_state:*", T, "Slack install states, valid 10 minutes and used once"),
    Family("health:platform:*", T, "what a chat platform waits for (a Feishu store app's app_ticket)"),
    Family(
        "feishu:isv:*",
        T,
        "a Feishu store app's app_ticket and tokens: secrets, fetched again (the ticket resent on request)",
    ),
    # --- what people set up
    Family("subs", B, "the subscriptions"),
    Family("chancfg:*", B, "each conversation's settings (language, time zone, questions, file)"),
    Family("watches", B, "people's watches"),
    Family("owners:*", B, "each conversation's owner mappings (CODEOWNERS names → people)"),
    Family("corrections:ws:*", B, "readers' level corrections made in one workspace of a multi-workspace platform"),
    Family("corrections:*", B, "readers' level corrections (never expire)"),
    Family("slack:install:*", B, "Slack workspaces' installations and bot tokens (keep the file secret)"),
    # --- what was delivered and posted (a restored bot posts nothing twice)
    Family("ledger:*", B, "scheduled deliveries made (delivered, failed or uncertain)"),
    Family("delivery:*", B, "a delivery's progress: which of its messages went out"),
    Family("posted:*", B, "posted messages' content, for level taps and redraws"),
    Family("slack:sent:*", B, "keyed Slack posts made (a resumed send finds them)"),
    Family("feishu:form:*", B, "Feishu Ask forms' context, for a form submitted later"),
    Family("alertsince:*", B, "since when each conversation has alerts on"),
    Family("alertsent:*", B, "commits alerted into each conversation"),
    Family("alertpoll:*:done", B, "alert polls done"),
    Family("alerthour:*", B, "each hour's alert count and its 'more' message"),
    Family("watchrun:*:done", B, "watch runs done"),
    Family("watchrun:*:header", B, "a watch run's header message, sent once"),
    Family("watchsent:*", B, "commits a watch told its person of"),
    Family("downstream-told:*", B, "fork conflicts told to the fork's owner"),
    # --- conversations and reports
    Family("thread:*", B, "which commits a bot thread is about"),
    Family("history:*", B, "what was said in a bot thread (its memory)"),
    Family("report:signing-key", B, "signs report links: without it every posted link breaks"),
    Family("report:*:scope", B, "the workspace a report page was published for (its corrections)"),
    Family("report:*", B, "published report pages, linked from posted digests by a random id"),
    Family("llm:tokens:ws:*", B, "a workspace's LLM tokens this month (LLM_MONTHLY_TOKEN_BUDGET_PER_WORKSPACE)"),
    Family("llm:tokens:*", B, "the month's LLM tokens (LLM_MONTHLY_TOKEN_BUDGET counts them)"),
    # --- caches: made again when missing
    Family("analysis:*", C, "commit analyses (and their single-flight claims)"),
    Family("files:*", C, "commits' files and patches"),
    Family("digest:*", C, "kept digests, where they were shown, their improve passes"),
    Family("improve:due", C, "when each kept digest's next improve pass is due"),
    Family("headline:*", C, "digest headlines"),
    Family("codeowners:*", C, "a repository's CODEOWNERS at a commit"),
    Family("readers:*", C, "languages a repository is read in (noted again by every digest)"),
    Family("taste2:*", C, "learned profiles, learnt again from history and corrections"),
    Family("taste2-state:*", C, "what a profile's learning read"),
    Family("taste2-days:*", C, "the days a repository's profile was learnt"),
    Family("llm:endpoint:*", C, "what was learnt about an LLM endpoint (probed again)"),
    Family("ghapp:*", C, "a GitHub App's installations and tokens (asked of GitHub again; never backed up)"),
)

QUEUE = Family("arq:*", T, "the job queue (arq): queued, running and finished jobs")


def classify(key: str, prefix: str) -> Family | None:
    """The family of a full key name (None: a key no family describes)."""
    if key.startswith(prefix):
        rest = key[len(prefix) :]
        return next((f for f in FAMILIES if fnmatchcase(rest, f.pattern)), None)
    if is_queue_key(key, prefix):
        return QUEUE
    return None


def is_queue_key(key: str, prefix: str) -> bool:
    """arq's keys for this prefix's jobs: the queue, and each job's own keys (job ids start with the prefix)."""
    if key == f"arq:queue:{prefix}":
        return True
    head, _, job = key.partition(":")[2].partition(":")
    return key.startswith("arq:") and head in ("job", "result", "in-progress", "retry") and job.startswith(prefix)


def kept(key: str, prefix: str) -> bool:
    """Whether a backup holds `key` (a key of no known family is kept: better kept than lost)."""
    family = classify(key, prefix)
    return family is None or family.kind is Kind.BACKUP
