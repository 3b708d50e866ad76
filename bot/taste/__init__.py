"""What readers think of the bot's judgement, kept and put to use: their level corrections
(`corrections.py`) and the operator's command for them (`feedback_cli.py`)."""
