"""Context: a value next to a name or label holding a credential word anywhere.

`acme_apiSecret`, `acmeapisecretkey`, `Zorblex API key:`, `Using Key=` (names.py says which names
count), after any separator: assignments in any common syntax, comparisons, flags, XML elements,
URL queries, a key alone on its line, and the loose separators of logs, tables and prose
(`token - '…'`, `| key | … |`, `password is '…'`), after which only a random-looking value counts.
The value is judged by length, character classes and entropy, and must not be code, a path, a URL,
a version, a template, a placeholder, a UUID or hash next to a bare `key`, or a safe word such as
`write` (GitHub's `id-token: write`). A value once withheld is withheld wherever else it appears
in the text.
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import unquote

from .names import CONTEXT_HINTS, IDENTIFIER, NAME_WORD, name_kind_is_password, name_strength, wordy_identifier
from .placeholders import FAKE_MARKER, MARK_PREFIX, SAFE_VALUES, is_placeholder, mark
from .values import (
    NUMBER,
    UUID,
    VERSION,
    another_assignment,
    braced_random,
    is_code,
    looks_random,
    readable,
    strongly_random,
    wordy,
)

# name <op> value. The name is the last identifier-like run before the operator (dots, dashes
# and a closing quote allowed: `spring.datasource.password`, `--api-key`, `"client_secret"`).
_ASSIGN = re.compile(
    r"(?P<name>[A-Za-z_$@][A-Za-z0-9_$.\-]*)(?:\[[^\]\n]{0,20}\]|[ \t]+\d{1,3}(?=[ \t]*:))?[\"'`]?"
    r"(?:[ \t]*:[ \t]*[A-Za-z_][\w\[\], .|?]*?(?=[ \t]*=[^=]))?"  # a type annotation before `=`
    r"(?:[ \t]+(?:string|String|str)\b)?"  # Go: var name string = "…"
    r"[ \t]*(?P<op>:{1,3}=|=>|\?=|\.=|\|\|=|!==|===|!=|==|=(?![=>])|(?<!:):(?![:/])|,(?=[ \t]*[\"'`])|\(|->|(?<=[A-Za-z0-9\"'])[ \t](?=[ \t]*[\"'`@])"
    r"|(?<=[ \t])(?:-|\||is)(?=[ \t])|(?<=[A-Za-z0-9])[ \t](?=[ \t]*[A-Za-z0-9+/{]))"
    r"[ \t]*(?:[@$](?=[\"'`])|[A-Za-z]{1,2}(?=[\"']))?"  # ObjC @"…", Python r"…" / b'…' / f"…"
    r"[ \t]*(?:\"\"(?=\")|''(?='))?"  # the first two quotes of \"\"\"…\"\"\" or '''…'''
    r"[ \t]*(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){1,4000})\""
    r"|'(?P<sq>(?:[^'\\\r\n]|\\.){1,4000})'"
    r"|`(?P<bq>[^`\r\n]{1,4000})`"
    r"|(?P<bare>[^\s\"'`,;(){}\[\]<>=#:][^\s\"'`;]{0,4000}))"
)
# --some-api-key VALUE on a command line
_FLAG = re.compile(
    r"(?<![\w\-])--?(?P<name>[A-Za-z][\w\-.]*)[ \t]+(?:\"(?P<dq>[^\"\n]{1,400})\"|'(?P<sq>[^'\n]{1,400})'"
    r"|(?P<bare>[^\s\"'`\-][^\s\"'`]{0,400}))"
)
# "value" == name (comparisons written the other way round)
_REVERSED = re.compile(
    r"(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){1,400})\"|'(?P<sq>(?:[^'\\\r\n]|\\.){1,400})')[ \t]*"
    r"(?:!==|===|!=|==)[ \t]*(?P<name>[A-Za-z_$][A-Za-z0-9_$.\-]*)"
)
# <password>value</password>, <secret>…</secret>; the value may sit on the next line.
_XML = re.compile(
    r"<(?P<name>[A-Za-z0-9_][\w.\-:]*)(?:[ \t][^<>\n]*)?>[ \t]*(?:\r?\n[+\- ]?[ \t]*)?"
    r"(?P<xml>[^<>\s][^<>\n]{0,400}?)[ \t]*(?:\r?\n[+\- ]?[ \t]*)?</(?P=name)>"
)
# <add key="ApiKey" value="…"/>, name="password" value="…"
_ATTR_PAIR = re.compile(
    r"(?i)\b(?:key|name|id)=[\"'](?P<name>[^\"'\n]{1,80})[\"'][ \t]*value=(?:\"(?P<dq>[^\"\n]{1,400})\""
    r"|'(?P<sq>[^'\n]{1,400})')"
)


_PROSE_OR_CODE = re.compile(
    r"\b(?:the|is|are|was|be|your|you|of|to|for|a|an|this|that|not|if|else|elif|in|return|await|lambda|new|then"
    r"|match|from|import|def|fn|let|const|var|none|null|true|false|must|should|will|can|use|enter|please)\b"
    r"|[()\[\]{}=<>]|\.\w+\(|%s|%\(|\{\}|\{0\}"
)
_SPACED_VALUE = re.compile(r"[A-Za-z0-9][\w@#$%^&*!?.,'+-]*(?: [\w@#$%^&*!?.,'+-]+){1,5}")
_PLAIN_WORDS = re.compile(r"[a-z]+(?: [a-z]+){1,5}")
_ENV_VAR_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_WORDS_ID = re.compile(r"[a-z]+(?:[_\-.][a-z]+)+|[A-Z][a-z]+(?:[A-Z][a-z]+)+|[a-z]+(?:[A-Z][a-z]+)+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_COMMENT_OR_EOL = re.compile(r"[ \t]*(?:[#;]|//|/\*|$)")


def _value_is_secret(value: str, strength: int, quoted: bool, op: str, name: str) -> bool:
    v = value.strip()
    if "%" in v and _PERCENT.search(v):
        v = unquote(v).strip("[]'\" ")  # a URL-encoded value: client_id=%5B%27scrubbed%27%5D
    if braced_random(v):
        return True  # Jenkins' credentials.xml: <secret>{AQAAABAAAAAQ…}</secret>
    if is_placeholder(v):
        return False
    low = v.lower().strip(":?*")
    if low in SAFE_VALUES or (
        low.startswith(("fake", "dummy", "test-", "test_", "example", "sample")) and not looks_random(v)
    ):
        return False
    if FAKE_MARKER.search(low) and (len(v) < 32 or not looks_random(v)):
        return False  # test-key-123, xai-fake_api_key_1234, placeholder-token
    if "://" in v or v.startswith(("/", "./", "../", "~/", "\\\\")) or re.match(r"[A-Za-z]:\\", v):
        return False  # URLs (credentials in them are handled apart) and paths
    if VERSION.fullmatch(v) or _ENV_VAR_NAME.fullmatch(v) or _DATE.fullmatch(v):
        return False
    if v.endswith("*") and not looks_random(v.rstrip("*")):
        return False  # a glob: [[ "$HF_TOKEN" != hf_* ]]
    if "@sha256:" in v or v.startswith("\\"):
        return False  # a pinned image reference; an escape sequence
    if (
        v.startswith("arn:")
        or (v[:1] in "#." and wordy(v[1:]))
        or ("/" in v and wordy(v.split("?")[0].replace("/", "-")))
    ):
        return False  # an AWS resource name, a CSS selector (#add-password), a route (cms/sites/passwords)
    if strength == 1 and readable(v):
        return False  # `Cookie`, `Proxy-Authorization`
    if (
        UUID.fullmatch(v)
        and strength < 2
        and (len(NAME_WORD.findall(name)) < 2 or name_strength(name)[1] == "client-id")
    ):
        return False  # an id, not a secret, next to a bare "key" or a client id (but `Heroku key`, `Using Key`)
    has_space = any(c.isspace() for c in v)
    if has_space and quoted and len(v.split()) <= 3 and any(len(p) >= 20 and strongly_random(p) for p in v.split()):
        return True  # a scheme word and a token: "FlyV1 fm1r_…", "Token Tq8…"
    if has_space:
        # "correct horse battery staple" after a password-like name; prose otherwise
        return (
            strength == 2
            and (quoted or op in (":", "="))
            and len(v) >= 8
            and len(v.split()) <= 6
            and _SPACED_VALUE.fullmatch(v) is not None
            and not v.endswith((".", ":", "?", "!", "(", "{", ","))
            and not _PROSE_OR_CODE.search(low)
            and (quoted or _PLAIN_WORDS.fullmatch(v) is not None)
        )
    if readable(v) and not name_kind_is_password(name):
        return False  # words and numbers (caller-supplied, exchanged-token, azure-key-value-42): not a key
    if NUMBER.fullmatch(v):
        return strength == 2 and len(v) >= 12 and v.isdigit()
    if strength == 1:
        return looks_random(v) and len(v) >= 16 and not wordy_identifier(v)
    if looks_random(v):
        return True
    if len(v) < 4:
        return False
    if "/" in v and not quoted:
        return False  # a path or a MIME type
    if re.fullmatch(r"[\w.\-]+\.(?:py|js|ts|json|yaml|yml|toml|txt|md|html|pem|key|crt|env|cfg|ini|sh|lock)", v):
        return False  # a file name
    if is_code(v) or (_WORDS_ID.fullmatch(v) and max(map(len, re.split(r"[_\-.]", v))) < 20):
        return False  # code (settings.api_key) or a name made of words (real_key, user-password)
    if op in ("==", "!=", "===", "!==", ",", "(") and (v.isidentifier() and not any(c.isdigit() for c in v)):
        return False  # comparisons and arguments: a plain word is a value of the program
    if not quoted:
        if IDENTIFIER.fullmatch(v) and not any(c.isdigit() for c in v) and v[:1].isupper():
            return False  # a class or constant
        if IDENTIFIER.fullmatch(v) and op not in (":", "=", ":="):
            return False
    last = re.split(r"[.\-]|->|::", name)[-1].lower()
    return not (v.lower() in (name.lower(), last) or v.lower().replace("_", "") == last.replace("_", ""))


def _value_of(m: re.Match[str]) -> tuple[str, str | None]:
    for group in ("dq", "sq", "bq", "bare", "xml"):
        try:
            value = m.group(group)
        except IndexError:
            continue
        if value is not None:
            return group, value
    return "", None


def _redact_line(line: str, kinds: Counter, found: dict[str, str] | None = None) -> str:
    spans: list[tuple[int, int, str]] = []

    def consider(m: re.Match[str], name: str, op: str) -> None:
        strength, kind = name_strength(name)
        if not strength:
            return
        group, value = _value_of(m)
        if value is None:
            return
        if op == " " and (name.split()[-1].lower() == "pass" or value[:1] in "-[(<"):
            return  # "Pass `--flag`": prose about a flag, not a password
        quoted = group in ("dq", "sq", "bq", "xml")
        if group == "bare":
            value = _trim_bare(value)
            if line[m.start("name") - 1 : m.start("name")] in ("?", "&"):
                value = value.split("&", 1)[0]  # a URL's query: ?token=…&page=2
            if not value or op == "(":
                return
            if _capitals_label(name, op, value):
                start = m.start(group)
                spans.append((start, start + len(value), kind))
                return  # `acme SECRET 4f8a…`, `acme PRIVATE TOKEN ZXC2…`: a label in capitals, then its value
            if op in _LOOSE_OPS and not (len(value) >= 16 and _TOKENISH.fullmatch(value) and looks_random(value)):
                return  # `token - 1`, `secret sauce`: only a random-looking value follows a dash or a space
            if is_code(value) or value.endswith(("{", "(", "[")):
                return  # a call, an index, an attribute, a block
            if value.startswith(("@", "&", "*", "!", "%", "-", "+")) and not looks_random(value):
                return  # decorators, YAML anchors/aliases/tags, flags
            if another_assignment(value):
                return  # another assignment: f(api_key=key, http_client=client)
            rest = line[m.start(group) + len(value) :].strip().rstrip(",;")
            if (
                strength == 2
                and op in (":", "=")
                and rest
                and not rest.startswith(("#", "//"))
                and _PLAIN_WORDS.fullmatch(value + " " + rest)
                and _value_is_secret(value + " " + rest, strength, False, op, name)
            ):
                start = m.start(group)
                spans.append((start, start + len(value) + len(line[start + len(value) :].rstrip().rstrip(",;")), kind))
                return  # a multi-word value: `aws_secret_access_key: value with spaces`
            if IDENTIFIER.fullmatch(value) and not looks_random(value):
                if not _COMMENT_OR_EOL.match(line, m.start(group) + len(value)) or value.startswith("_"):
                    return  # `x = match y {`, `token = token if …`: code, not a literal
                # (a flag's match has no `op` group: `--token VALUE` is judged by the value alone)
                if op == "=" and "op" in m.re.groupindex and line[m.start("op") - 1 : m.start("op")] in (" ", "\t"):
                    return  # `api_key = sentinel` is code; `API_KEY=abcdef` (.env) is a literal
        if (
            quoted
            and value.isalpha()
            and value.islower()
            and len(value) <= 10
            and kind != "password"
            and line[: m.start("name")].rstrip().endswith(("(", ","))
        ):
            return  # f(api_key='first'): a word stands in for a key in a test's call
        if not _value_is_secret(value, strength, quoted, op, name):
            return
        start = m.start(group)
        spans.append((start, start + len(value), kind))

    # `name <op> value`, tried only where a name holding a credential word starts
    lowered = line.lower()
    tried = set()
    for hint in _CONTEXT_PREFILTER.finditer(lowered):
        start = _name_start(line, max(0, hint.start() - 80), hint.start())
        while start < hint.start() and not (line[start].isalpha() or line[start] in "_$@"):
            start += 1
        if start in tried:
            continue
        tried.add(start)
        m = _ASSIGN.match(line, start)
        if m is None or m.end("name") <= hint.start():
            continue
        name, op = m.group("name"), m.group("op")
        label = _LABEL_BEFORE.search(line, max(0, start - 40), start)
        if label and _LABEL_WORDS.fullmatch(name):
            name = label.group(1) + " " + name  # a label of words: `Zorblex API key: …`, `Using Key=…`
        if not (op == ":" and name.startswith("http")):
            consider(m, name, op)
    if "-" in line:
        for m in _FLAG.finditer(line):
            consider(m, m.group("name"), "=")
    if "==" in line or "!=" in line:
        for m in _REVERSED.finditer(line):
            consider(m, m.group("name"), "==")
    if "<" in line:
        for m in _XML.finditer(line):
            consider(m, m.group("name"), "xml")
        if "value=" in line:
            for m in _ATTR_PAIR.finditer(line):
                consider(m, m.group("name"), "=")
    if not spans:
        return line
    spans.sort()
    out, at = [], 0
    for start, end, kind in spans:
        if start < at:
            continue
        out.append(line[at:start])
        out.append(mark(kind))
        kinds[kind] += 1
        if found is not None:
            found[line[start:end]] = kind
        at = end
    out.append(line[at:])
    return "".join(out)


_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_LOOSE_OPS = frozenset((" ", "-", "|", "is"))
_CAPITALS_LABELS = frozenset("SECRET KEY TOKEN PASSWORD APIKEY ACCESS PRIVATE".split())
_LABEL_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]{15,}")


def _capitals_label(name: str, op: str, value: str) -> bool:
    """A credential word written in capitals as a label, a space, then one long token: prose says
    'the secret is', code names a constant; only a label reads `SECRET 4f8a…`."""
    if op != " " or name.split()[-1] not in _CAPITALS_LABELS or _LABEL_VALUE.fullmatch(value) is None:
        return False
    if _ENV_VAR_NAME.fullmatch(value):
        return False  # SECRET KEY_ROTATION_PERIOD_DAYS: a constant's name
    if value.isalpha():
        return len(value) >= 20 and len(set(value)) > 10  # letters only: long and varied
    return len(set(value)) > 4


_LABEL_BEFORE = re.compile(r"(?<![\w.\-])([A-Za-z][A-Za-z0-9]*)[ \t]+$")
_LABEL_WORDS = re.compile(r"[A-Za-z][a-z]*")
_TOKENISH = re.compile(r"[A-Za-z0-9+/=_\-.~:]+")


def _trim_bare(value: str) -> str:
    """An unquoted value without the punctuation that ends its statement: `abc,` `abc)` `abc;`."""
    while value and value[-1] in ".,;:)]}>":
        closer = value[-1]
        opener = {")": "(", "]": "[", "}": "{", ">": "<"}.get(closer)
        if opener and value.count(opener) >= value.count(closer):
            break
        value = value[:-1]
    return value


_CONTEXT_PREFILTER = re.compile("|".join(CONTEXT_HINTS))  # run over the lowercased text: re.I is 9x slower


_NAME_CHARS = re.compile(r"[A-Za-z0-9_$.\-]*")
_NAME_CHARS_BACK = re.compile(r"[A-Za-z0-9_$.\-]*$")


# Both patterns match (maybe empty) wherever they are tried, so the fallbacks below never apply.
def _name_start(text: str, lo: int, hi: int) -> int:
    """Where the run of name characters ending at `hi` begins, no further back than `lo`."""
    m = _NAME_CHARS_BACK.search(text, lo, hi)
    return m.start() if m else hi


def _name_end(text: str, pos: int) -> int:
    """Where the run of name characters starting at `pos` ends."""
    m = _NAME_CHARS.match(text, pos)
    return m.end() if m else pos


# A hint that is a credential word by itself (every hint but client, pat, contrase, unless oddly
# cased: `sAs`) makes its line wanted whatever the name around it, and the scan goes on at the
# next line: one regex search per wanted line rather than one Python step per hit.
_SELF_HINTS = frozenset(h for h in CONTEXT_HINTS if name_strength(h)[0])


def _lines_with_credential_names(text: str) -> list[int]:
    """Indexes of the lines holding a name that says credential: the same lines as
    _lines_with_credential_names_per_hit, found with fewer steps."""
    found: list[int] = []
    lowered = text.lower()  # same length: lower() keeps ASCII offsets
    counted_to, line_index, pos = 0, 0, 0
    search = _CONTEXT_PREFILTER.search
    while (m := search(lowered, pos)) is not None:
        start, end = m.span()
        line_start = text.rfind("\n", 0, start) + 1
        if m.group(0) in _SELF_HINTS and name_strength(text[start:end])[0]:
            wanted = True
        else:
            name_start = _name_start(text, max(line_start, start - 80), start)
            name_end = _name_end(text, end)
            wanted = bool(name_strength(text[name_start:name_end].strip(".-"))[0] or name_strength(text[start:end])[0])
        if not wanted:
            pos = end
            continue
        line_index += text.count("\n", counted_to, line_start)
        counted_to = line_start
        found.append(line_index)
        pos = lowered.find("\n", end)  # the rest of a wanted line does not matter
        if pos < 0:
            break
    return found


def _lines_with_credential_names_per_hit(text: str) -> list[int]:
    """Indexes of the lines holding a name that says credential: a hint word found by one scan of
    the text, widened to the name around it, and that name judged by name_strength (cached)."""
    found: list[int] = []
    last_line_start, counted_to, line_index = -1, 0, 0
    for m in _CONTEXT_PREFILTER.finditer(text.lower()):  # same length: lower() keeps ASCII offsets
        start = m.start()
        line_start = text.rfind("\n", 0, start) + 1
        if line_start == last_line_start:
            continue
        name_start = _name_start(text, max(line_start, start - 80), start)
        name_end = _name_end(text, m.end())
        if name_strength(text[name_start:name_end].strip(".-"))[0] or name_strength(text[start : m.end()])[0]:
            last_line_start = line_start
            line_index += text.count("\n", counted_to, line_start)
            counted_to = line_start
            found.append(line_index)
    return found


# `access_token:` at the end of a line, its value alone on the next (YAML, wrapped code)
_DANGLING = re.compile(r"^[+\- ]?[ \t]*(?:- )?[\"']?[A-Za-z_][\w.\-]*[\"']?[ \t]*(?::|=|:=|=>)[ \t]*$")  # a lone key
# a short line of words naming the value on the next line: `Eventbrite private access key`
_LABEL_LINE = re.compile(r"[+\- ]?[ \t]*(?:(?:#|//|\*)[ \t]*)?[A-Za-z][A-Za-z ]{0,60}[ \t]*")
_LONE_VALUE = re.compile(r"[+\- ]?[ \t]*(?P<q>[\"']?)(?P<value>[^\s\"'#]{8,400})(?P=q)[,;]?[ \t]*")


def _redact_next_line_value(lines: list[str], i: int, kinds: Counter, found: dict[str, str]) -> None:
    m = _LONE_VALUE.fullmatch(lines[i + 1])
    if m is None:
        return
    quote, value = m.group("q"), m.group("value")
    if not looks_random(value):
        return  # `if token:` then `continue` is code; a value alone on its line must look random
    seen: dict[str, str] = {}
    _redact_line(lines[i].rstrip() + " " + quote + value + quote, Counter(), seen)
    if value in seen:
        kinds[seen[value]] += 1
        found[value] = seen[value]
        lines[i + 1] = lines[i + 1].replace(value, mark(seen[value]), 1)


def redact_context(text: str, kinds: Counter) -> str:
    wanted = _lines_with_credential_names(text)
    if not wanted:
        return text
    lines = text.split("\n")
    found: dict[str, str] = {}  # value -> kind, of every value withheld
    # An XML element split over three lines: join the value line to its tags.
    for i in wanted:
        line = lines[i]
        if line.rstrip().endswith(">") and i + 2 < len(lines) and "</" in lines[i + 2] and "<" in line:
            joined = _redact_line("\n".join(lines[i : i + 3]), kinds, found)
            if MARK_PREFIX in joined and joined != "\n".join(lines[i : i + 3]):
                lines[i : i + 3] = joined.split("\n")
                continue
        lines[i] = _redact_line(line, kinds, found)
        if i + 1 < len(lines) and (_DANGLING.search(line) or _LABEL_LINE.fullmatch(line)):
            _redact_next_line_value(lines, i, kinds, found)
    text = "\n".join(lines)
    # A value once known to be a secret is one wherever else it appears (`token = 'X' | 'X'`,
    # the same key pasted again further down, in a message after the diff).
    for value, kind in found.items():
        if len(value) >= 8 and looks_random(value) and not any(c.isspace() for c in value) and value in text:
            kinds[kind] += text.count(value)
            text = text.replace(value, mark(kind))
    return text
