"""`config [lang zh|en] [tz ZONE] [questions mention|all] [file on|off]` — this conversation's
settings (admins only when admins are configured); without options, shows them."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.chat_platform import Notice
from ...i18n import phrase
from ..grammar import choice, options, timezone
from .base import Command, Request
from .describe import settings_line


@dataclass(frozen=True)
class ConfigArgs:
    lang: str | None = None
    tz: str | None = None
    questions: str | None = None
    file: bool | None = None


def parse(args: list[str]) -> ConfigArgs:
    opts = options(
        args,
        {"lang": "zh|en", "tz": phrase("errors.expect_zone"), "questions": "mention|all", "file": "on|off"},
        "config",
    )
    return ConfigArgs(
        lang=choice(opts["lang"], ("zh", "en"), "lang", "config") if "lang" in opts else None,
        tz=timezone(opts["tz"], "config") if "tz" in opts else None,
        questions=choice(opts["questions"], ("mention", "all"), "questions", "config") if "questions" in opts else None,
        file=(choice(opts["file"], ("on", "off"), "file", "config") == "on") if "file" in opts else None,
    )


async def run(req: Request, args: ConfigArgs) -> None:
    conv = req.conv
    req.tools.policy.require_admin(conv)
    updated = await req.tools.subs.set_config(
        conv.platform, conv.channel, lang=args.lang, tz=args.tz, questions=args.questions, file=args.file
    )
    body = settings_line(updated)
    if not conv.is_dm:  # the platform may say why a setting cannot work yet (a scope not granted)
        caveat = await req.platform.config_caveat(conv.channel, updated.questions, updated.lang)
        body += "\n" + caveat if caveat else ""
    await req.reply(Notice(body, lang=updated.lang))  # in the language just chosen


COMMAND = Command("config", ("settings", "设置"), parse, run)
