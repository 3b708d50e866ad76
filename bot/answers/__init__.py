"""Answers to questions about one commit (commit_qa.py) and the streaming they share with the
answers about a period (bot/period_questions/): the prompt fitted to the window, the held-back gate."""
