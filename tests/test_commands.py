import pytest

from bot.conversation.commands import COMMANDS, CommandError, help_text, parse_command, usage
from bot.conversation.commands.ask import AskArgs
from bot.conversation.commands.config import ConfigArgs
from bot.conversation.commands.digest import DigestArgs
from bot.conversation.commands.help import HelpArgs
from bot.conversation.commands.listing import ListArgs
from bot.conversation.commands.subscribe import SubscribeArgs
from bot.conversation.commands.unsubscribe import UnsubscribeArgs
from bot.i18n import localize

DigestCmd, SubscribeCmd, UnsubscribeCmd, ListCmd, AskCmd, ConfigCmd, HelpCmd = (
    DigestArgs,
    SubscribeArgs,
    UnsubscribeArgs,
    ListArgs,
    AskArgs,
    ConfigArgs,
    HelpArgs,
)
NAMES = {
    DigestArgs: "digest",
    SubscribeArgs: "subscribe",
    UnsubscribeArgs: "unsubscribe",
    ListArgs: "list",
    AskArgs: "ask",
    ConfigArgs: "config",
    HelpArgs: "help",
}


@pytest.mark.parametrize(
    "text,expected",
    [
        ("", DigestCmd(None, ())),
        ("2026-01-28", DigestCmd("2026-01-28", ())),
        ("2026-01-28 vllm-project/vllm", DigestCmd("2026-01-28", ("vllm-project/vllm",))),
        (
            "digest today sgl-project/sglang vllm-project/vllm",
            DigestCmd("today", ("sgl-project/sglang", "vllm-project/vllm")),
        ),
        ("2026-01-20..2026-01-22 a/b", DigestCmd("2026-01-20..2026-01-22", ("a/b",))),
        ("digest https://github.com/a/b.git", DigestCmd(None, ("a/b",))),
        ("日报 yesterday a/b", DigestCmd("yesterday", ("a/b",))),
        (
            "subscribe a/b at 9:05 tz America/New_York lang en min high branch release/1.0 empty skip",
            SubscribeCmd("a/b", "09:05", "America/New_York", "en", "high", "release/1.0", False),
        ),
        ("订阅 a/b", SubscribeCmd("a/b")),
        ("unsubscribe a/b", UnsubscribeCmd("a/b")),
        ("LIST", ListCmd()),
        ("ask af9b69f what could break?", AskCmd("af9b69f", "what could break?")),
        ("ask #32688 影响？", AskCmd("#32688", "影响？")),
        # No commit named: a question about a period (bot/period_questions/); a–f words are not SHAs.
        ("ask what changed in the scheduler this week?", AskCmd(None, "what changed in the scheduler this week?")),
        ("ask added caching since Monday?", AskCmd(None, "added caching since Monday?")),
        ("问 上周 FP8 在 ROCm 上有什么改动？", AskCmd(None, "上周 FP8 在 ROCm 上有什么改动？")),
        ("config lang en questions all file on", ConfigCmd("en", None, "all", True)),
        ("help", HelpCmd()),
    ],
)
def test_grammar(text, expected):
    parsed = parse_command(text)
    assert (parsed.command.name, parsed.args) == (NAMES[type(expected)], expected)


@pytest.mark.parametrize(
    "text,message,command",
    [
        ("frobnicate", "Unknown command 'frobnicate'", None),
        ("2026-01-28 2026-01-29", "Two dates given", "digest"),
        ("subscribe", "Name the repository", "subscribe"),
        ("subscribe a/b at 25:00", "'at' must be a time like 09:30", "subscribe"),
        ("subscribe a/b tz Mars/Base", "Unknown time zone 'Mars/Base'", "subscribe"),
        ("subscribe a/b lang fr", "lang must be zh or en", "subscribe"),
        ("subscribe a/b min urgent", "min must be high or medium or low", "subscribe"),
        ("subscribe a/b at", "needs a value", "subscribe"),
        ("subscribe a/b colour blue", "Unknown option 'colour'", "subscribe"),
        ("subscribe a/b at 09:00 at 10:00", "given twice", "subscribe"),
        ("unsubscribe", "exactly one repository", "unsubscribe"),
        ("ask", "Ask a question", "ask"),
        ("ask af9b69f", "Ask a question", "ask"),
        # Without a verb, a date starts a digest only when every word is a date or a repository.
        ("上周 FP8 在 ROCm 上有什么改动？", "Unknown command '上周'", None),
        ("list extra", "takes no arguments", "list"),
        ("config questions sometimes", "questions must be mention or all", "config"),
    ],
)
def test_errors_name_the_problem_and_the_command(text, message, command):
    with pytest.raises(CommandError) as err:
        parse_command(text)
    assert message in str(err.value) and err.value.command == command
    assert "\n" not in str(err.value)


def test_usage_and_help_in_both_languages():
    assert usage("en", "subscribe").startswith("/digest subscribe owner/repo")
    assert "@bot ask" in usage("zh", "ask", prefix="@bot")
    for lang in ("zh", "en"):
        text = help_text(lang)
        assert all(word in text for word in ("digest", "subscribe", "unsubscribe", "list", "ask", "config"))


def test_every_command_is_in_the_table_once_with_its_usage_in_both_languages():
    words = [w for c in COMMANDS for w in (c.name, *c.aliases)]
    assert len(words) == len(set(words)), "a word names two commands"
    for c in COMMANDS:
        for lang in ("zh", "en"):
            # the digest's verb is optional (`/digest 2026-01-28`): its usage leaves it out, not `/digest digest`
            assert usage(lang, c.name).startswith("/digest [" if c.name == "digest" else f"/digest {c.name}")


def test_errors_are_said_in_the_channels_language():
    with pytest.raises(CommandError) as err:
        parse_command("subscribe a/b lang fr")
    assert localize(err.value, "en") == "lang must be zh or en, not 'fr'."
    assert localize(err.value, "zh") == "lang 只能是 zh 或 en，不能是“fr”。"


def test_a_digest_without_its_verb_takes_noise_options_and_a_question_stays_a_question():
    from bot.conversation.commands.filters import FilterArgs

    # what REQUEST_MAX_COMMITS suggests (bot/conversation/commands/delivering.py) is itself a command that parses
    parsed = parse_command("2026-01-28 astral-sh/uv paths crates/uv-resolver/** exclude **/*.md")
    assert parsed.args == DigestCmd(
        "2026-01-28", ("astral-sh/uv",), FilterArgs(paths=("crates/uv-resolver/**",), exclude=("**/*.md",))
    )
    assert parse_command("2026-01-27..2026-01-28 paths src/**").args.filters.paths == ("src/**",)
    with pytest.raises(CommandError):
        parse_command("上周 FP8 paths 在 ROCm 上有什么改动？")  # words before the option that are neither


@pytest.mark.parametrize(
    "text,expected",
    [
        ("owners", ("list", "", "", "")),
        ("负责人", ("list", "", "", "")),
        ("owners map @acme/core <!subteam^S0CORE|@core>", ("map", "@acme/core", "slack_group", "S0CORE")),
        ("owners map @alice <@U0ALICE|alice>", ("map", "@alice", "slack_user", "U0ALICE")),
        ('owners map dev@example.com <at user_id="ou_abc"></at>', ("map", "dev@example.com", "feishu_user", "ou_abc")),
        ("owners map @alice @alice.w", ("map", "@alice", "name", "alice.w")),
        ("owners @acme/core <!subteam^S0CORE>", ("map", "@acme/core", "slack_group", "S0CORE")),
        ("负责人 dev@example.com <@U0DEV>", ("map", "dev@example.com", "slack_user", "U0DEV")),
        ("owners remove @acme/core", ("remove", "@acme/core", "", "")),
    ],
)
def test_owners_grammar(text, expected):
    parsed = parse_command(text)
    a = parsed.args
    assert parsed.command.name == "owners" and (a.action, a.owner, a.kind, a.id) == expected


@pytest.mark.parametrize(
    "text,en,zh",
    [
        ("owners map @acme/core", "Map @acme/core to whom?", "@acme/core 映射给谁？"),
        ("owners map acme/core <@U1X>", "'acme/core' is not a code owner", "'acme/core' 不是代码负责人"),
        ("owners map @acme/core alice", "'alice' is not a mention", "'alice' 不是提及"),
        ("owners map @a <@U1X> <@U2Y>", "One mention per owner", "每个负责人只能映射一个提及"),
        ("owners frob", "Unknown owners action 'frob'", "未知的 owners 操作 'frob'"),
        ("owners @acme/core", "Map @acme/core to whom?", "@acme/core 映射给谁？"),
        ("owners remove @a @b", "Name one code owner to remove.", "请写出要移除的一个代码负责人。"),
    ],
)
def test_owners_bad_input_is_one_sentence_in_either_language(text, en, zh):
    with pytest.raises(CommandError) as err:
        parse_command(text)
    assert err.value.command == "owners" and "\n" not in str(err.value)
    assert en in localize(err.value, "en") and zh in localize(err.value, "zh")
    assert usage("zh", "owners").startswith("/digest owners")
