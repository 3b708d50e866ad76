"""Which workspace (Slack team or enterprise, Feishu tenant) a conversation or a person belongs to.

A bot installed into several workspaces keeps everything per (platform, workspace, conversation).
Rather than thread a third key through every store, the workspace travels inside the ids the
adapters hand the core: a conversation is `T0123/C0456` and a person `T0123/U0789` when the
platform serves several workspaces, and the bare `C0456` / `U0789` when it serves one (so a
single-workspace bot's data is what it always was). Every key built from a channel or a user is
therefore per workspace without knowing it, a request can only name ids of its own workspace (the
adapter qualifies them from the verified request), and the adapter that sends picks the
workspace's token from the address.

Only adapters qualify and split addresses; the core treats them as opaque strings. Neither Slack
nor Feishu ids contain `/`, so the split is unambiguous.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

SEP = "/"


def qualify(tenant: str | None, local: str) -> str:
    """`tenant/local`, or `local` when the platform serves one workspace (tenant None or "")."""
    return f"{tenant}{SEP}{local}" if tenant else local


def split(address: str) -> tuple[str | None, str]:
    """(tenant or None, the platform's own id)."""
    tenant, sep, local = address.partition(SEP)
    return (tenant, local) if sep else (None, address)


def tenant_of(address: str) -> str | None:
    return split(address)[0]


def local_id(address: str) -> str:
    """The id the platform's API knows (the address without its workspace)."""
    return split(address)[1]


SHARED = ""  # the scope of every single-workspace conversation, and of the CLI


def scope_of(platform: str, channel: str) -> str:
    """The workspace scope of data kept for a conversation that is shared across its platform's
    conversations (readers' level corrections, bot/taste/corrections.py): "" when the platform
    serves one workspace (a bare id), else `{platform}:{tenant}`."""
    tenant = tenant_of(channel)
    return f"{platform}:{tenant}" if tenant else SHARED


# The workspace a request or an on-demand delivery is run for: the LLM tokens spent meanwhile
# count against its monthly budget as well as the deployment's (bot/analysis/cost.py). Set where a
# conversation's request runs (the router) and where a delivery runs; asyncio copies it into the
# tasks started inside. SHARED (the default) is the deployment alone: scheduled builds, the CLI.
ACTING_FOR: ContextVar[str] = ContextVar("workspace_scope", default=SHARED)


@contextmanager
def acting_for(scope: str) -> Iterator[None]:
    token = ACTING_FOR.set(scope)
    try:
        yield
    finally:
        ACTING_FOR.reset(token)
