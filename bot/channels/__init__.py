"""What the bot keeps about each conversation: its subscriptions and settings, and its threads."""
