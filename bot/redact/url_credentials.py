"""Credentials in URLs: `user:password@host` in any scheme, and a token as the user name.

Apart from the shape rules because the password is judged as a value (a placeholder, a safe word,
words a person writes for a password in docs and tests), not by its form.
"""

from __future__ import annotations

import re
from collections import Counter

from .placeholders import SAFE_VALUES, is_placeholder, mark
from .values import placeholder_words, strongly_random

# user:password@ in any URL (https, postgres, redis, amqp, …); the user name is kept.
_URL_CREDENTIALS = re.compile(
    # from "://": a literal start is found fast; the password runs to the last @ (p@ss@host)
    r"://[^\s:/@'\"`<>]*:(?P<value>[^\s/'\"`<>]{1,200})@"
)


# A token as the URL's user name, no password: https://ghx_Tq8…@host/repo.git
_URL_TOKEN_USER = re.compile(r"://(?P<value>[A-Za-z0-9_\-.~]{16,200})@")


def redact_url_credentials(text: str, kinds: Counter) -> str:
    if "://" not in text:
        return text

    def replace(m: re.Match[str]) -> str:
        value = m.group("value")
        if is_placeholder(value) or value.lower() in SAFE_VALUES or placeholder_words(value):
            return m.group(0)
        kinds["url-password"] += 1
        return m.group(0)[: m.start("value") - m.start()] + mark("url-password") + "@"

    def replace_user(m: re.Match[str]) -> str:
        if not strongly_random(m.group("value")):
            return m.group(0)
        kinds["url-token"] += 1
        return "://" + mark("url-token") + "@"

    return _URL_TOKEN_USER.sub(replace_user, _URL_CREDENTIALS.sub(replace, text))
