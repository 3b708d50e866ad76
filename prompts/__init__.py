"""The prompt templates (`{job}.{lang}.j2`), shipped inside the package so an installed wheel
finds them from any directory; `bot.core.prompts` reads them with importlib.resources."""
