"""Names that say credential: the variable, key, flag, element or label a value is given.

A name is split into words (snake, kebab, dots, camelCase). It names a credential when one of
its words is a credential word and no later word turns it into something else (password_field,
token_url, max_tokens). Strong words (password, secret, token, api key…) accept any literal that
is not code, a path or a placeholder; the weak ones (key, auth, id, …) only values that look
random. Each line is looked at only when it contains one of CONTEXT_HINTS.

Also here: whether a value is itself an identifier made of words (`wordy_identifier`), which no
detector takes for a key. This module imports nothing of the package (see __init__).
"""

from __future__ import annotations

import re
from functools import lru_cache

_STRONG_WORDS = frozenset(
    """
password passwd passphrase passcode pwd pw pass passwort contrasena secret secrete secrets token
credential credentials apikey bearer privatekey clientsecret accesskey secretkey authtoken accesstoken
refreshtoken apitoken authkey signingkey encryptionkey masterkey sessionkey webhooksecret pat
""".split()
)
_WEAK_WORDS = frozenset("key auth api cred creds cookie sas hmac login access private license licence".split())
# Two-word names that read as one credential word.
_PAIRS = {
    ("api", "key"): "apikey",
    ("private", "key"): "privatekey",
    ("client", "secret"): "clientsecret",
    ("access", "key"): "accesskey",
    ("secret", "key"): "secretkey",
    ("auth", "token"): "authtoken",
    ("access", "token"): "accesstoken",
    ("refresh", "token"): "refreshtoken",
    ("api", "token"): "apitoken",
    ("auth", "key"): "authkey",
    ("signing", "key"): "signingkey",
    ("encryption", "key"): "encryptionkey",
    ("master", "key"): "masterkey",
    ("session", "key"): "sessionkey",
    ("client", "id"): "clientid",
    ("app", "secret"): "clientsecret",
    ("app", "key"): "apikey",
    ("consumer", "key"): "apikey",
    ("consumer", "secret"): "clientsecret",
    ("account", "key"): "accesskey",
    ("webhook", "secret"): "webhooksecret",
}
# Words after the credential word that make the name something else.
_AFTER_NOT_SECRET = frozenset(
    """
name names file files path paths dir directory url uri urls endpoint host env var vars variable field fields
length len size min max count counts limit type types kind header headers param params label labels prompt hint
regex re pattern policy policies required input inputs reset expiry expires expiration expire ttl timeout
provider providers manager store helper helpers source format mode cache column col index idx prefix suffix
style class error errors message msg text placeholder help description desc template schema validator
validation scheme location config configs settings option options enabled enable disabled set setter getter
fn func function callback handler handlers id ids hash hashed hasher digest salt len file_path usage used
strength confirm confirmation changed change update updated ref reference lookup key_id method methods flow
generator factory loader parser reader writer encoder decoder service client request response resp req res
cls model models form view views module test tests spec mock dummy example sample length bytes bits
policy rotation version mgr obj object struct map dict list tuple array int bool count
budget budgets price cost costs rate window chars char start end begin pos offset ids prob probs logprob
logprobs embedding embeddings vocab vocabs usage proxy server gateway base docs spec route router content contents
""".split()
)
# Words before the credential word that make the name something else (max_tokens, num_tokens …).
_BEFORE_NOT_SECRET = frozenset(
    """
max min num n total count input output prompt completion reasoning cached cache sort primary foreign partition
hash dict map cache_key lookup row column unique composite group public publishable pub csrf xsrf next
page pagination continuation cursor sync idempotency dedup dedupe ssh_public gpg_public ice per
""".split()
)
NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
CONTEXT_HINTS = (
    "pass",
    "pw",
    "secret",
    "token",
    "key",
    "auth",
    "cred",
    "bearer",
    "api",
    "cookie",
    "sas",
    "hmac",
    "client",
    "pat",
    "contrase",
    "login",
    "access",
    "private",
    "licen",
)


@lru_cache(maxsize=8192)
def name_strength(name: str) -> tuple[int, str]:
    """(0 none / 1 weak / 2 strong, kind) for a variable, key, flag or element name."""
    found = _name_strength(name)
    if not found[0] and _CAPITALS_THEN_LOWER.search(name):
        # `packagecloudPRIVATEkey`: camelCase reads PRIVAT + Ekey; read the capitals as one word
        found = _name_strength(_CAPITALS_THEN_LOWER.sub(lambda m: "_" + m.group(1).lower() + "_" + m.group(2), name))
    return found


_CAPITALS_THEN_LOWER = re.compile(r"([A-Z]{2,})([a-z])")


def _name_strength(name: str) -> tuple[int, str]:
    words = [w.lower() for w in NAME_WORD.findall(name)]
    if not words:
        return 0, ""
    merged: list[str] = []
    i = 0
    while i < len(words):
        pair = (words[i], words[i + 1]) if i + 1 < len(words) else None
        if pair in _PAIRS:
            merged.append(_PAIRS[pair])
            i += 2
            continue
        merged.append(words[i])
        i += 1
    best, best_at = 0, -1
    for at, word in enumerate(merged):
        strength = 2 if word in _STRONG_WORDS else 1 if (word in _WEAK_WORDS or word == "clientid") else 0
        if not strength and (inner := _inner_credential(word)):
            merged[at], strength = inner, 2  # acmeapisecretkey, zorbtokenvalue: one word holding one
        elif not strength and len(word) > 5 and word.endswith("key") and not word[:-3].endswith(_INNER_NOT_BEFORE):
            merged[at], strength = "key", 1  # querykey, deploykey: weak, as `key` is
        if strength and strength >= best:
            best, best_at = strength, at
    if not best:
        return 0, ""
    word = merged[best_at]
    after = merged[best_at + 1 :]
    if any(w in _AFTER_NOT_SECRET or w.endswith("tokens") for w in after):
        return 0, ""
    if word in ("access", "private") and after:
        return 0, ""  # `uv-private-pypackage`, `access_log`: only a name ending in the word names a credential
    if word == "pat" and (len(merged) == 1 or after):
        return 0, ""  # a bare or inner "pat" is a pattern or a person
    if best_at and merged[best_at - 1] in _BEFORE_NOT_SECRET:
        return 0, ""
    if word == "pw" and best_at == 0 and len(merged) > 1:
        return 0, ""
    return best, _kind_of(word)


# A credential word inside a longer lowercase word (`acmeapisecretkey`, `ZORBTOKEN`): what may
# follow it and still name the credential itself (not `tokenizer`, `secretary`, `passwordless`).
_INNER_WORDS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "credential", "credentials")
_INNER_SUFFIXES = frozenset("key value val str string b64 base64 hex raw".split()) | {""}
_INNER_NOT_BEFORE = tuple(w for w in _BEFORE_NOT_SECRET if len(w) >= 3)


def _inner_credential(word: str) -> str:
    for cred in _INNER_WORDS:
        at = word.rfind(cred)
        if at > 0 and word[at + len(cred) :] in _INNER_SUFFIXES and not word[:at].endswith(_INNER_NOT_BEFORE):
            return cred
    return ""


def _kind_of(word: str) -> str:
    if word.startswith("pass") or word in ("pwd", "pw", "contrasena", "passwort"):
        return "password"
    if "token" in word or word in ("bearer", "pat"):
        return "token"
    if word in (
        "apikey",
        "accesskey",
        "authkey",
        "key",
        "api",
        "signingkey",
        "encryptionkey",
        "masterkey",
        "sessionkey",
        "privatekey",
    ):
        return "api-key"
    if word == "clientid":
        return "client-id"
    return "secret"


def name_kind_is_password(name: str) -> bool:
    return name_strength(name)[1] in ("password", "secret")


IDENTIFIER: re.Pattern[str] = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEX = re.compile(r"[0-9a-fA-F]+")  # as in values.py: neither module imports the other (see __init__)


def wordy_identifier(value: str) -> bool:
    """`ConnectionString_B2B`, `userAccountKey2`: an identifier made of words and short numbers
    (random text breaks into many short pieces, and its long pieces lack vowels)."""
    if IDENTIFIER.fullmatch(value) is None or _HEX.fullmatch(value):
        return False
    words = NAME_WORD.findall(value)
    return len(words) <= len(value) / 4 and all(
        (w.isdigit() and len(w) <= 4) or (w.isalpha() and (len(w) <= 3 or any(c in "aeiouyAEIOUY" for c in w)))
        for w in words
    )
