"""The conversation, platform-neutral: the router, commands' shared pieces, questions, threads, subscriptions."""
