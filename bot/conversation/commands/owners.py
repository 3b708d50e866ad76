"""`owners` — the code owners this conversation tells, and who they are here.

  owners                          list the mappings (to the person who asks)
  owners [map] OWNER MENTION      OWNER: @user, @org/team or an e-mail, as CODEOWNERS names them;
                                  MENTION: Slack <@U…> or <!subteam^S…>, Feishu an @-mention
                                  (<at user_id="ou_…"></at>), the terminal @name
  owners remove OWNER

Changing a mapping is for the admins (when admins are configured), like `subscribe`. A digest's
parent message then says once per owner how many high and medium commits touch their paths
(bot/delivery/post.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...channels.owner_mentions import OwnerMapping, OwnerMappings
from ...core.codeowners_file import is_owner
from ...core.models import UsageError
from ...core.platform_registry import by_name, mention_forms
from ...i18n import echo, phrase
from ..grammar import CommandError
from .base import Command, Request

MAP_WORDS = ("map", "set", "映射", "设置")
REMOVE_WORDS = ("remove", "rm", "unmap", "删除", "移除")


@dataclass(frozen=True)
class OwnersArgs:
    action: str  # list | map | remove
    owner: str = ""
    kind: str = ""
    id: str = ""


def parse_mention(typed: str) -> tuple[str, str] | None:
    """(kind, id) of a typed mention; None when it is none of the forms. The forms are the
    platforms' (bot/core/platform_registry.py), the first that matches wins."""
    for form in mention_forms():
        if m := form.typed.match(typed.strip()):
            return form.kind, m.group(1)
    return None


def _owner(word: str) -> str:
    if not is_owner(word):
        raise CommandError(phrase("owners.bad_owner", value=echo(word)), "owners")
    return word


def parse(args: list[str]) -> OwnersArgs:
    if not args:
        return OwnersArgs("list")
    verb = args[0].lower()
    if verb in REMOVE_WORDS:
        if len(args) != 2:
            raise CommandError(phrase("owners.remove_one"), "owners")
        return OwnersArgs("remove", _owner(args[1]))
    if verb not in MAP_WORDS:
        if not is_owner(args[0]):
            raise CommandError(phrase("owners.bad_verb", word=echo(args[0])), "owners")
        args = ["map", *args]  # `owners @org/team @someone`: the verb is optional
    if len(args) < 2:
        raise CommandError(phrase("owners.map_needs_owner"), "owners")
    owner = _owner(args[1])
    if len(args) < 3:
        raise CommandError(phrase("owners.needs_mention", owner=owner), "owners")
    typed = " ".join(args[2:])  # a Feishu <at …></at> holds spaces
    found = parse_mention(typed)
    if found is None:
        key = "owners.one_mention" if len(args) > 3 and parse_mention(args[2]) else "owners.bad_mention"
        raise CommandError(phrase(key, value=echo(typed)), "owners")
    return OwnersArgs("map", owner, *found)


def shown(kind: str, id_: str) -> str:
    """A mapping's mention as the conversation's own markup (the list and confirmations ping
    nobody: they show the mention as text, escaped by the renderer)."""
    form = next((f for f in mention_forms() if f.kind == kind), None)
    return form.show(id_) if form is not None else f"@{id_}"


async def run(req: Request, args: OwnersArgs) -> None:
    conv = req.conv
    mappings = OwnerMappings(req.tools.store)
    if args.action == "list":
        held = await mappings.of(conv.platform, conv.channel)
        if not held:
            await req.private(req.notice(req.say("owners.list_none", prefix=req.prefix)))
            return
        lines = [req.say("owners.list_head")]
        lines += [
            req.say("owners.list_item", owner=m.owner, mention=shown(m.kind, m.id))
            for m in sorted(held.values(), key=lambda m: m.owner.lower())
        ]
        await req.private(req.notice("\n".join(lines)))
        return
    req.tools.policy.require_admin(conv)
    if args.action == "remove":
        if await mappings.remove(conv.platform, conv.channel, args.owner):
            await req.reply(req.notice(req.say("owners.removed", owner=args.owner)))
        else:
            await req.private(req.notice(req.say("owners.not_mapped", owner=args.owner)))
        return
    platform = by_name(conv.platform)
    if platform is not None and not platform.any_mention and args.kind not in platform.mention_kinds:
        raise UsageError(phrase("owners.wrong_platform", value=shown(args.kind, args.id)))
    await mappings.set(conv.platform, conv.channel, OwnerMapping(args.owner, args.kind, args.id))
    await req.reply(req.notice(req.say("owners.mapped", owner=args.owner, mention=shown(args.kind, args.id))))


COMMAND = Command("owners", ("负责人",), parse, run)
