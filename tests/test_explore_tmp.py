from tests.test_slack_e2e import (CHANNEL, HIGH_TITLE, LOW_TITLE, MEDIUM_TITLE, by_title, digest_thread, make_bot, shown, slack, widgets)  # noqa

async def test_explore(make_bot, slack, widgets, flaky_llm):
    flaky_llm.fail(LOW_TITLE, importance="medium", change_type="docs")
    bot = await make_bot(**flaky_llm.settings())
    parent, replies = await digest_thread(bot, slack)
    print(shown(parent))
    for r in replies: print("----", r.edits, shown(r)[:600])
    print([ (r["messages"][-1]["content"][:300]) for r in flaky_llm.fake.requests][:1])
    assert 0
