import pytest

from bot.commands import (AskCmd, CommandError, ConfigCmd, DigestCmd, HelpCmd, ListCmd, SubscribeCmd,
                          UnsubscribeCmd, help_text, parse_command, usage)


@pytest.mark.parametrize("text,expected", [
    ("", DigestCmd(None, ())),
    ("2026-01-28", DigestCmd("2026-01-28", ())),
    ("2026-01-28 vllm-project/vllm", DigestCmd("2026-01-28", ("vllm-project/vllm",))),
    ("digest today sgl-project/sglang vllm-project/vllm", DigestCmd("today", ("sgl-project/sglang", "vllm-project/vllm"))),
    ("2026-01-20..2026-01-22 a/b", DigestCmd("2026-01-20..2026-01-22", ("a/b",))),
    ("digest https://github.com/a/b.git", DigestCmd(None, ("a/b",))),
    ("日报 yesterday a/b", DigestCmd("yesterday", ("a/b",))),
    ("subscribe a/b at 9:05 tz America/New_York lang en min high branch release/1.0 empty skip",
     SubscribeCmd("a/b", "09:05", "America/New_York", "en", "high", "release/1.0", False)),
    ("订阅 a/b", SubscribeCmd("a/b")),
    ("unsubscribe a/b", UnsubscribeCmd("a/b")),
    ("LIST", ListCmd()),
    ("ask af9b69f what could break?", AskCmd("af9b69f", "what could break?")),
    ("ask #32688 影响？", AskCmd("#32688", "影响？")),
    ("config lang en questions all file on", ConfigCmd("en", None, "all", True)),
    ("help", HelpCmd()),
])
def test_grammar(text, expected):
    assert parse_command(text) == expected


@pytest.mark.parametrize("text,message,command", [
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
    ("ask", "Give a commit", "ask"),
    ("ask zzz why?", "is not a commit SHA", "ask"),
    ("list extra", "takes no arguments", "list"),
    ("config questions sometimes", "questions must be mention or all", "config"),
])
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
