"""The words of a commit message the rules go by: a breaking change declared, a security fix
claimed (or only mentioned), a CVE, input newly refused, a trust boundary, hardening, a crash or a
hang, behaviour said to be preserved, a changed default, a dependency bump, a release, a runtime
whose support changes, a mechanical sweep (typos, formatting, lint).

parse_title (title.py) reads them once into the commit's `TitleInfo`; the evidence module named in
each section weighs what they say. Words are read as the author's words: `prose` (message.py)
masks file names, paths, identifiers and code spans first where a name could carry one
(security.py, Swatinem/rust-cache, prohibit_none_typevar_overlap say nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .message import prose

# --- a breaking change declared (weighed by evidence/breaking.py) ---------------------------------

_TAG = re.compile(r"\[[^\[\]]{1,40}\]\s*:?")
_WORD = r"breaking(?:[ -]changes?)?"
_DECLARATION = re.compile(
    # a label before the subject, after any conventional prefix: "Breaking: …", "feat: breaking change - …"
    rf"^(?:[A-Za-z]+(?:\([^)]*\))?!?\s*:\s*)?{_WORD}\s*(?::|!|\s[-–—]\s)"
    # an aside: "… (breaking)", "… — breaking change"
    rf"|\(\s*{_WORD}\s*\)|\s[-–—,;]\s*{_WORD}\s*[.!]?$"
    # a sentence saying so: "… is a breaking change"
    r"|\b(?:is|as) an? breaking change\b",
    re.I,
)
_SHOUTED = re.compile(r"\bBREAKING\b")  # "BREAKING: …", "… [BREAKING]", "… BREAKING CHANGE"
_NEGATED_TAG = re.compile(r"\b(non|not?|un)[- ]?breaking", re.I)


def _in_title(title_text: str) -> bool:
    """The title declares it: a label, an aside or a shouted BREAKING — read without the names in
    it (file names, paths, identifiers, code spans)."""
    words = prose(title_text)
    subject = _TAG.sub(" ", words).strip(" :-–—")
    return bool(_DECLARATION.search(subject) or _SHOUTED.search(words))


def _in_tags(tags: Sequence[str]) -> bool:
    """A bracket tag that says so: [Breaking], [BREAKING CHANGE], [breaking-change] — not
    [non-breaking], and not a file name in brackets."""
    return any(re.search(r"(?<![\w-])breaking\b", prose(tag), re.I) and not _NEGATED_TAG.search(tag) for tag in tags)


def _in_body(body: str) -> bool:
    """The conventional footer ('BREAKING CHANGE: …') or a ticked template box whose label is the
    declaration ('- [x] Breaking change (fix or feature that …)'; not '- [x] Breaking changes are
    documented', not '- [x] breaking.py reformatted')."""
    return bool(
        re.search(r"^\s*BREAKING[ -]CHANGES?\s*(?::|$)", body, re.M)
        or re.search(rf"^\s*[-*]\s*\[[xX]\]\s*{_WORD}\s*(?:$|[(:—–-])", prose(body), re.M | re.I)
    )


def declares_breaking(title_text: str, body: str, bang: bool, tags: Sequence[str]) -> bool:
    """Does the message declare a breaking change? (`tags`: the title's bracket tags as written)."""
    return bang or _in_tags(tags) or _in_title(title_text) or _in_body(body)


# --- security claimed, a trust boundary, input refused (weighed by evidence/security.py) ----------

# Words that claim a security fix. A bare "security" ("Add security headers option") only notes it.
_SECURITY_WORDS = re.compile(
    r"\b(CVE-\d{4}-\d{4,}|GHSA(-\w{4}){3}|security (fix|issue|bug|hole|patch|advisory)"
    r"|vulnerab\w+|XSS|CSRF|SSRF|RCE|(sql|command|code|header|template) injection"
    r"|path traversal|privilege escalation|auth(entication)? bypass)\b",
    re.I,
)
_SECURITY_MENTION = re.compile(r"\bsecurity\b", re.I)
_CVE = re.compile(r"\b(CVE-\d{4}-\d{4,}|GHSA(?:-\w{4}){3})\b", re.I)
# "Reject …", "Require …", "Disallow …": input that was accepted is refused after this change.
# "Error on …" is one when the program is what errors ("Error on top-level options", "now error
# when …", "emit an error for …"), not when the error is the bug fixed ("Fix syntax error on …",
# "Fix an INTERNAL ERROR when …") or a message made clearer ("Raise a better error when …").
_REJECT_WORDS = re.compile(
    r"^(reject|refuse|disallow|forbid|enforce|require|deny|block|prohibit)s?\b"
    r"|\b(?:now|to|will|should|must|and|then|also|always|properly|correctly|explicitly|consistently)\s+"
    r"(reject|refuse|disallow|forbid|enforce|prohibit)s?\b"
    r"|\b(reject(s|ed|ing)?|refus(es|ed|ing)|disallow(s|ed|ing)?|forbid(s|den|ding)?|enforc(es|ed|ing)"
    r"|prohibit(s|ed|ing)?)(?=\s+(?!(by|from|in|on|at|for|when|if|of)\b)(an?|the|any|all|empty|invalid|unknown"
    r"|duplicate|non-|unsupported|mixed|bare|\w+s\b))"
    r"|\bno longer (accept|allow)\w*|\brais(e|es|ing) (an? )?(explicit )?[`'\"]?\w*error"
    r"|^error (on|for|when)\b|\b(now|to|will|should|must|then) error (on|for|when)\b"
    r"|\b(show|emit|report|give|return|add|generate|raise|issue|produce)(s|es|ed|d|ing)? (an? )?"
    r"(?!(better|nicer|clearer|cleaner|more|improved|friendlier|helpful)\b)(\w+ )?error (on|for|when)\b",
    re.I,
)
# "a refused edit", "the rejected click": the word names what was refused before, not what this
# change starts refusing.
_ADJECTIVE = re.compile(r"\b(an?|the|its|their|each|every|any|no)\s+$", re.I)
_NEGATED = re.compile(
    r"\b(do not|don't|does not|doesn't|no|not|never|stop|avoid|without|unnecessar\w*)\s+(\w+\s+)?$", re.I
)
# Words that put a change on a trust boundary even when nobody wrote "security". "Reserved" and
# "escape" only in that sense: reserved names (not "output reserved per request"), escaping a
# directory or markup (not escaping quotes in a string).
_GUARD_WORDS = re.compile(
    r"\b(insecure|bypass\w*|integrity|md5|sha-?1|(path|directory|zip|archive)[- ]traversal"
    r"|reserved[- ](\w+[- ])?(names?|words?|keywords?|identifiers?|entry[- ]points?|file ?names?|paths?"
    r"|characters?|prefix(es)?|namespaces?|scripts?|commands?|device names?)"
    r"|escap(e|es|ing)( from| out of)? (the |a |its |their )?(\w+[- ])?(dir|dirs|directory|directories|folder"
    r"|root|sandbox|jail|container|target|scope)\b|(sandbox|jail|container|chroot|path|directory) escapes?"
    r"|(html|shell|sql|xml) escap\w*|escap(e|es|ing) (the )?(html|shell|sql|xml)\b"
    r"|symlinks?|untrusted|spoof\w*|tamper\w*|injection|sanitiz\w*"
    r"|credentials?|secrets|secret (keys?|tokens?|values?)|api[- ]keys?|privilege\w*|permissions?"
    r"|checksums?|hash-checking|require-hashes)\b",
    re.I,
)
_HARDENING_WORDS = re.compile(
    r"\b(harden\w*|isolat\w*|credentials?|permissions?|least[- ]privilege|poison\w*"
    r"|injection|caches?|cache-aware)\b",
    re.I,
)


def claims_security_fix(title_text: str) -> bool:
    return bool(_SECURITY_WORDS.search(prose(title_text, spans=False)))


def mentions_security(title_text: str) -> bool:
    return bool(_SECURITY_MENTION.search(prose(title_text)))


def cve(title: str, body: str) -> str:
    """The first CVE or GHSA id anywhere in the message, upper-cased ('' when none)."""
    m = _CVE.search(f"{title}\n{body}")
    return m.group(0).upper() if m else ""


# An error users already got, said better: "raise a proper error", "a clearer error message".
_CLEARER_ERROR = re.compile(
    r"\b(proper|clear(er)?|better|informative|helpful|meaningful|descriptive|actionable|nicer|friendlier)"
    r"( \w+)? (error|exception)s?\b",
    re.I,
)


def clearer_error(text: str) -> bool:
    """The message says the change makes an error clearer: the input failed before too, so
    nothing that worked is refused now."""
    return bool(_CLEARER_ERROR.search(prose(text)))


def refused_input(subject: str) -> str:
    """The first 'reject/require …' word that is not negated ('Do not error on …'); "raise
    `TypeError`" keeps its code span."""
    subject = prose(subject, spans=False)
    for m in _REJECT_WORDS.finditer(subject):
        before = subject[max(0, m.start() - 30) : m.start()]
        if not _NEGATED.search(before) and not _ADJECTIVE.search(before):
            said = re.sub(r"[`'\"]", "", m.group(0)).lower()
            return re.sub(r"^.* (error (on|for|when))$", r"\1", said)  # "emit an error for" → "error for"
    return ""


def guard(title_text: str, body_text: str) -> tuple[str, bool]:
    """(the trust-boundary word of the title, else of the body; whether it is in the title)."""
    in_title = _GUARD_WORDS.search(prose(title_text))
    found = in_title or _GUARD_WORDS.search(prose(body_text))
    return (found.group(0) if found else ""), bool(in_title)


def hardening(title_text: str) -> bool:
    return bool(_HARDENING_WORDS.search(prose(title_text)))


# --- crashes, hangs, preserved behaviour, defaults (weighed by evidence/behaviour.py) -------------

_CRASH_WORDS = re.compile(
    r"\b(crash(es|ed|ing)?(?![-‐ ]?(safe|safety|proof|resistant|only|recovery|consistent|tolerant)\b)"
    r"|segfault\w*|segmentation fault|illegal instruction|invalidinstruction"
    r"|sigill|sigsegv|core dump\w*|panic(s|ked)?|stack overflow)\b",
    re.I,
)
# "Hanging indentation", "a hanging comma" are layout, not a program that hangs.
_PATHOLOGY_WORDS = re.compile(
    r"\b(exponential\w*|quadratic\w*|pathological\w*|blow-?up|never (terminat|finish)\w*|super-?linear"
    r"|hang(s|ing)?\b(?!\s+(indent\w*|punctuation|commas?|paren\w*|brackets?|braces?|operators?|closing"
    r"|lines?|dedent\w*|else|delimiters?)\b))\b",
    re.I,
)
_PRESERVING = re.compile(
    r"\b(pure(ly)? refactor\w*|no (functional|behaviou?r(al)?) changes?|behaviou?r[- ]preserving"
    r"|without changing (any of )?the (logic|behaviou?r)|should(™)? have no effect"
    r"|no user[- ]visible change\w*|does not change (the )?behaviou?r|non-functional change"
    r"|behaviou?r (is )?unchanged|no (intended |expected )?(output|formatting|functional|behaviou?r(al)?) changes?)\b",
    re.I,
)
_DEFAULT_WORDS = re.compile(
    r"\b(by default|defaults? to|change[sd]? (the )?defaults?|new defaults?"
    r"|default value)\b",
    re.I,
)


def crash(text: str) -> bool:
    """The title or body speaks of a crash of the program."""
    return bool(_CRASH_WORDS.search(text))


def pathology(text: str) -> bool:
    """Exponential blow-ups, hangs — said in words, not the name of a rule or a file
    (`quadratic-list-summation`, hang_detector.py)."""
    return bool(_PATHOLOGY_WORDS.search(prose(text)))


# "Existing backend behaviour is unchanged", "no behaviour change for other models", "… for the
# common path", "… unchanged apart from the fix": what stays the same is the old paths, beside
# something new — not the whole change.
_SCOPE = r"(existing|other|current|old|legacy|previous|default|remaining|common|normal|usual|typical)"
_SCOPED_BEFORE = re.compile(rf"^\s*(the\s+)?{_SCOPE}\b|\b{_SCOPE}\s+(\S+\s+){{0,2}}$", re.I)
_SCOPED_AFTER = re.compile(
    rf"^\s*((for|of|in|on|to)\s+(the\s+|all\s+)?{_SCOPE}\b|,?\s*(apart from|except|other than|besides)\b)", re.I
)


def preserving(text: str) -> bool:
    """The author says the behaviour of the change as a whole does not change — not only of the
    existing paths beside something new ("Existing backend behaviour is unchanged")."""
    for m in _PRESERVING.finditer(text):
        start = max(text.rfind(".", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
        if not _SCOPED_BEFORE.search(text[start : m.start()]) and not _SCOPED_AFTER.match(text[m.end() :]):
            return True
    return False


def default_change(title_text: str) -> bool:
    return bool(_DEFAULT_WORDS.search(title_text))


# --- output that was wrong, an interface that changes (weighed by evidence/behaviour.py and breaking.py)

# The program's own output was corrupted or wrong: "requests … receive corrupted attention output",
# "produces incorrect logits", "files to be corrupted". Not a corrupt input it now copes with
# ("Recover from a corrupted cache file").
_WRONG_OUTPUT = re.compile(
    r"\b(?P<w>corrupt(?:ed|s|ing|ion)?(?: (?:\w+ ){0,2}(?:outputs?|results?|data|files?|tokens?|logits|values|state))?"
    r"|(?:wrong|incorrect) (?:\w+ )?(?:results?|outputs?|logits|answers?)|garbage outputs?"
    r"|silently (?:wrong|incorrect|corrupt\w*))\b",
    re.I,
)
_WRONG_OUTPUT_WORDS = ("corrupt", "wrong", "incorrect", "garbage", "silently")
_COPES_WITH = re.compile(
    r"\b(recover\w*|handl\w*|toleran\w*|tolerat\w*|detect\w*|ignor\w*|skip\w*|reject\w*|from|on|with)\s+(\w+\s+)?$",
    re.I,
)
# The author declares that an interface changes under its callers: "This PR changes the two
# residual inputs to …", "changes the signature of …", "callers must update".
_INTERFACE_CHANGE = re.compile(
    r"\bchang(?:es|ed|ing) (?P<what>(?:the )?(?:[\w-]+ ){0,4}?(?:inputs?|arguments?|parameters?|signatures?"
    r"|return\stypes?|shapes?|layouts?|api|interface|contract))\b[^.\n]{0,60}?\b(?:to|from)\b"
    r"|\bcallers (?:must|need\sto|have\sto|will\sneed\sto) (?:update|change|migrate|adapt)\b",
    re.I,
)


def wrong_output(text: str) -> str:
    """The words saying the program's output was corrupted or wrong ('' when none): read in the
    author's prose (names and code masked), not a corrupt input handled ("Recover from corrupted …")."""
    lower = text.lower()
    if not any(w in lower for w in _WRONG_OUTPUT_WORDS):
        return ""  # the common case, without masking the names of a long body first
    words = prose(text)
    for m in _WRONG_OUTPUT.finditer(words):
        if not _COPES_WITH.search(words[max(0, m.start() - 30) : m.start()]):
            return m.group("w")
    return ""


_DENIED = re.compile(r"\b(without|not|no|never|n't|avoid\w*)\s+(\w+\s+)?$", re.I)


def interface_change(text: str) -> str:
    """What the author says changes under its callers ('the two Humming residual inputs'); 'callers'
    when the message only says they must update; '' when it says neither (or "without changing
    the public API")."""
    lower = text.lower()
    if "callers" not in lower and "chang" not in lower:
        return ""
    words = prose(text)
    for m in _INTERFACE_CHANGE.finditer(words):
        if not _DENIED.search(words[max(0, m.start() - 30) : m.start()]):
            return (m.group("what") or "").strip() or "callers"
    return ""


# --- a dependency bump (weighed by evidence/dependencies.py) --------------------------------------

_BUMP_FROM_TO = re.compile(
    r"\b(?:bump|bumps|update|updates|upgrade|upgrades)\s+(?:dependency\s+)?"
    r"(?P<name>[@\w./-]+)(?:\s+requirement)?\s+from\s+[~^>=<v ]*(?P<old>\d[\w.]*)"
    r"\s+to\s+[~^>=<v ]*(?P<new>\d[\w.]*)",
    re.I,
)
# Renovate names a major update "to v3" and a minor/patch one "to v2.3.1".
_RENOVATE_MAJOR = re.compile(
    r"\bupdate\s+(?:dependency\s+|module\s+)?(?P<name>[@\w./-]+)"
    r"(?:\s+\w+)?\s+to\s+v(?P<new>\d+)\s*$",
    re.I,
)


def read_bump(subject: str) -> tuple[str, str, str] | None:
    """(name, old, new) from "Bump x from a to b" (old is '' for Renovate's "Update x to v3")."""
    m = _BUMP_FROM_TO.search(subject)
    if m:
        return m.group("name"), m.group("old"), m.group("new")
    m = _RENOVATE_MAJOR.search(subject)
    return (m.group("name"), "", m.group("new")) if m else None


# --- a release, a runtime's support (weighed by evidence/release.py) ------------------------------

_RELEASE_TITLE = re.compile(
    r"^\s*(release|releasing|prepare (for )?release|bump( version)?( to)?|version)\s*:?\s*"
    r"v?\d+\.\d+(\.\d+)?([-.]?\w+)?\s*$|^\s*(prepare )?release v?\d+\.\d+",
    re.I,
)
# "Add support for Python 3.15", "Drop Node 18": who can run the project changes.
_RUNTIME_SUPPORT = re.compile(
    r"\b(support\w*|drop\w*|deprecat\w*|remov\w*|require\w*)\b.*\b(python|cpython|pypy|node(\.?js)?"
    r"|rust|go|cuda|rocm|java|jdk|ruby|php|\.net)\s*v?\d+(\.\d+)?",
    re.I,
)
_RUNTIME_NAME = re.compile(
    r"\b(python|cpython|pypy|node(\.?js)?|rust|go|cuda|rocm|java|jdk|ruby|php|\.net)\s*v?\d+(\.\d+)?", re.I
)


def is_release(*texts: str) -> bool:
    """ "Bump 0.16.4", "Prepare release v2.14.0b1": this project's own version changes."""
    return any(_RELEASE_TITLE.search(t) for t in texts)


def runtime_support(subject: str) -> str:
    """'Python 3.15' in "Add support for Python 3.15", '' when the subject names no runtime change."""
    m = _RUNTIME_SUPPORT.search(subject)
    name = _RUNTIME_NAME.search(m.group(0)) if m else None
    return name.group(0) if name else ""


# --- a mechanical sweep (weighed by evidence/scope.py) --------------------------------------------

_COSMETIC = re.compile(
    r"\b(typos?|spelling|misspell\w*|formatting|reformat\w*|code format|lint(s|ing|er)?"
    r"|whitespace|ruff|flake8|pylint|eslint|prettier|isort|yapf|clang-format|mypy"
    r"|pre-commit|type hints?|type annotations?|type coverage|type check(ing|er)?|typing|code style)\b",
    re.I,
)


def cosmetic(title_text: str) -> bool:
    return bool(_COSMETIC.search(title_text))
