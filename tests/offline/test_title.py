"""Reading the message: titles (tags, prefixes, bumps, reverts) and bodies (template boilerplate dropped)."""

from __future__ import annotations

from bot.analysis.offline import first_paragraph, parse_title


def test_parse_title_details():
    info = parse_title('Revert "Enable Cross layers KV cache layout at NIXL Connector (#30207)" (#33241)')
    assert info.reverted_title == "Enable Cross layers KV cache layout at NIXL Connector"
    info = parse_title("[Quantization][Deprecation] Remove Marlin 24 (#32688)")
    assert info.tags == ("Quantization", "Deprecation") and info.subject == "Remove Marlin 24"
    assert (
        parse_title("[Feature]: Container image WORKDIR consistency").subject == "Container image WORKDIR consistency"
    )
    assert parse_title("chore(deps): bump lodash from 4.17.20 to 5.0.0").bump == ("lodash", "4.17.20", "5.0.0")


def test_first_paragraph_skips_templates():
    body = (
        "<!-- please fill in -->\n## Purpose\n\nFIX #123 (*link existing issues*)\n\n"
        "- [x] The purpose of the PR\n\nThis makes the scheduler\nskip finished requests.\n\nTest Plan:\nran it"
    )
    assert first_paragraph(body) == "This makes the scheduler skip finished requests."
    assert first_paragraph("Fixes #12\n\nhttps://example.com/x") == ""
