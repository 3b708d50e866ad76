"""The public secret-scanner suites bench/eval_secrets.py measures bot/redact/ on, read at run
time from fetched mirrors (bare git directories); nothing taken from them is stored here.

Each loader returns Case(vendor, text, secret): `text` is what would be sent, `secret` the part
that must not reach the LLM, `vendor` the service the case is for as a normalised name (lower
case letters and digits, as bot/redact.vendor_names() spells the services its rules were written
for), or a generic name for formats and context (`private`, `jwt`, `generic`, `keyword`, …).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Case:
    vendor: str
    source: str  # the rule or test file the case comes from
    text: str
    secret: str


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True).stdout


def normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


# =============================================================================================
# detect-secrets: every case its tests/plugins/*_test.py expect a plugin to flag
# =============================================================================================

_DS_SKIP = {"base_test.py", "high_entropy_strings_test.py", "ip_public_test.py"}


def detect_secrets_cases(repo: Path) -> list[Case]:
    """The secret of a case is what detect-secrets' own plugin reports for it, run from the
    mirror's source (needs pyyaml, requests, responses). Vendor: the test file's first word."""
    tmp = Path(tempfile.mkdtemp(prefix="ds-eval-"))
    with tarfile.open(fileobj=io.BytesIO(git(repo, "archive", "HEAD", "detect_secrets", "tests", "testing"))) as tar:
        tar.extractall(tmp, filter="data")
    sys.path.insert(0, str(tmp))
    from detect_secrets.plugins.base import BasePlugin  # the mirror's own source

    cases: list[Case] = []
    for path in sorted((tmp / "tests" / "plugins").glob("*_test.py")):
        if path.name in _DS_SKIP:
            continue
        spec = importlib.util.spec_from_file_location(f"ds_eval_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        plugins = [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, BasePlugin) and v is not BasePlugin
        ]
        vendor = normalise(path.stem.split("_")[0])
        for func in _parametrized(module):
            for mark in getattr(func, "pytestmark", []):
                if mark.name != "parametrize":
                    continue
                names = [
                    n.strip() for n in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])
                ]
                for values in mark.args[1]:
                    values = getattr(values, "values", values)
                    if not isinstance(values, (tuple, list)):
                        values = (values,)
                    case = dict(zip(names, values))
                    cases.extend(Case(vendor, path.name, line, secret) for line, secret in _positive(case, plugins))
    seen, unique = set(), []
    for case in cases:
        if (case.text, case.secret) not in seen:
            seen.add((case.text, case.secret))
            unique.append(case)
    return unique


def _parametrized(module):
    for value in vars(module).values():
        if callable(value) and hasattr(value, "pytestmark") and value.__name__.startswith("test"):
            yield value
        if isinstance(value, type) and value.__name__.startswith("Test"):
            for attr in vars(value).values():
                attr = getattr(attr, "__func__", attr)
                if callable(attr) and hasattr(attr, "pytestmark") and attr.__name__.startswith("test"):
                    yield attr


def _positive(case: dict, plugins) -> list[tuple[str, str]]:
    line = next((case[k] for k in ("payload", "line", "token") if isinstance(case.get(k), str)), None)
    if line is None:
        return []
    if "expected_secret" in case:
        secret = case["expected_secret"]
        return [(line, secret)] if secret else []
    flag = case.get("should_flag", case.get("expected"))
    if flag is not True:
        return []
    found = []
    for plugin in plugins:
        try:
            found += [s.secret_value for s in plugin().analyze_line(filename="mock_filename", line=line)]
        except TypeError:
            continue
    return [(line, found[0] if found else line.strip())]


# =============================================================================================
# gitleaks: each rule of cmd/generate/config/rules/*.go
# =============================================================================================

# Our own assignment forms for GenerateSampleSecret(s)(identifier, secret).
_NAMED_FORMS = (
    '{i}_token = "{s}"',
    "{I}_TOKEN={s}",
    "{i}Token: '{s}'",
    '"{i}_token": "{s}",',
    '{i}Token := "{s}"',
    'export {I}_TOKEN="{s}"',
    "<{i}Token>{s}</{i}Token>",
    'System.setProperty("{I}_TOKEN", "{s}")',
)
_SINGLE_FORM = '{i}_api_token = "{s}"'
_GO_STRING = r'"(?:[^"\\\n]|\\.)*"|`[^`]*`'


def _go_unquote(literal: str) -> str:
    if literal.startswith("`"):
        return literal[1:-1]
    return (
        bytes(literal[1:-1], "utf-8").decode("unicode_escape").encode("latin-1", "replace").decode("utf-8", "replace")
    )


def py_regex(pattern: str) -> re.Pattern[str] | None:
    """A Go or Rust regular expression as a Python one (flags, POSIX classes, inner flag groups)."""
    flags = 0
    lead = re.match(r"(?:\(\?[imsx]+\)\s*)+", pattern)
    if lead:
        for letter in "".join(re.findall(r"\(\?([imsx]+)\)", lead.group(0))):
            flags |= {"i": re.I, "m": re.M, "s": re.S, "x": re.X}[letter]
        pattern = pattern[lead.end() :]
    if "(?i)" in pattern:  # Go allows flags mid-pattern; Python only at the start
        pattern, flags = pattern.replace("(?i)", ""), flags | re.I
    pattern = re.sub(r"\(\?:\s*\(\?([ims]+)\)", r"(?\1:", pattern)  # (?: (?s) .{0,40} ) -> (?s: .{0,40} )
    for posix, cls in (
        ("[:alnum:]", "a-zA-Z0-9"),
        ("[:alpha:]", "a-zA-Z"),
        ("[:digit:]", "0-9"),
        ("[:upper:]", "A-Z"),
        ("[:lower:]", "a-z"),
        ("[:xdigit:]", "0-9a-fA-F"),
        ("[:space:]", r"\s"),
        ("[:punct:]", r"!-/:-@\[-`{-~"),
    ):
        pattern = pattern.replace(posix, cls)
    pattern = pattern.replace(r"\z", r"\Z").replace("(?-i:", "(?:")
    if flags & re.X:
        pattern = re.sub(r"\{(\d+),\s+(\d+)\}", r"{\1,\2}", pattern)
    try:
        return re.compile(pattern, flags)
    except re.error:
        return None


def _sample(node_list, rng: random.Random, state) -> str:
    """A string matching an sre_parse tree (our own small generator)."""
    import re._constants as c

    out = []
    for op, av in node_list:
        if op is c.LITERAL:
            out.append(chr(av))
        elif op is c.NOT_LITERAL:
            out.append(rng.choice([ch for ch in "abcdefXYZ0123" if ord(ch) != av]))
        elif op is c.ANY:
            out.append(rng.choice("abcXYZ019"))
        elif op is c.IN:
            out.append(_pick_in(av, rng))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            hi = lo + 4 if hi is c.MAXREPEAT else hi
            n = lo if op is c.MIN_REPEAT and lo > 0 else rng.randint(lo, min(hi, lo + 40))
            if op is c.MIN_REPEAT:
                n = max(lo, min(n, 1))
            out.extend(_sample(sub, rng, state) for _ in range(n))
        elif op is c.SUBPATTERN:
            group, _, _, sub = av
            text = _sample(sub, rng, state)
            if group is not None:
                state[group] = text
            out.append(text)
        elif op is c.BRANCH:
            out.append(_sample(rng.choice(av[1]), rng, state))
        elif op is c.GROUPREF:
            out.append(state.get(av, ""))
        elif op is c.CATEGORY:
            out.append(_category(av, rng))
        # AT, ASSERT, ASSERT_NOT: nothing to emit
    return "".join(out)


def _category(cat, rng):
    name = str(cat)
    if "DIGIT" in name and "NOT" not in name:
        return rng.choice("0123456789")
    if "SPACE" in name and "NOT" not in name:
        return " "
    if "WORD" in name and "NOT" not in name:
        return rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    return rng.choice("abcXYZ")


def _pick_in(items, rng) -> str:
    import re._constants as c

    negate = any(op is c.NEGATE for op, _ in items)
    pool = []
    for op, av in items:
        if op is c.LITERAL:
            pool.append(chr(av))
        elif op is c.RANGE:
            pool.extend(chr(x) for x in range(av[0], av[1] + 1))
        elif op is c.CATEGORY:
            pool.append(_category(av, rng))
    if negate:
        allowed = [ch for ch in "abcdefghijkXYZ0123456789" if ch not in pool]
        return rng.choice(allowed or ["a"])
    printable = [ch for ch in pool if ch.isprintable() and ch not in "\\" and ch != " "] or pool
    return rng.choice(printable)


def _generate(pattern: str, group: int, rng: random.Random) -> tuple[str, str] | None:
    """(a whole line matching pattern, its secret group) from the gitleaks regex."""
    compiled = py_regex(pattern)
    if compiled is None:
        return None
    import re._parser as p

    tree = p.parse(compiled.pattern, compiled.flags)
    for _ in range(20):
        state: dict[int, str] = {}
        line = _sample(list(tree), rng, state)
        secret = state.get(group, line) if group else line
        if compiled.search(line) and secret.strip():
            return line, secret
    return None


def _secret_of(rule: dict, line: str) -> str | None:
    compiled = py_regex(rule["regex"])
    if compiled is None:
        return None
    m = compiled.search(line)
    if not m:
        return None
    group = rule.get("secretGroup", 1 if compiled.groups else 0)
    return m.group(group) or m.group(0)


def gitleaks_vendor(rule_id: str) -> str:
    return normalise(rule_id.split("-")[0])


def gitleaks_cases(repo: Path, rng: random.Random) -> tuple[list[Case], list[Case]]:
    """(every sample of every rule, the vendor-shaped rules' secrets alone on a line). For each
    rule: its literal true positives where given; for GenerateSampleSecret(s)(ident, secret) the
    secret (literal, or generated from the rule's regex in config/gitleaks.toml) in a few
    assignment forms of our own; for rules without samples, lines generated from the regex.
    Vendor: the rule id's first word (`github-pat` -> github)."""
    config = tomllib.loads(git(repo, "show", "HEAD:config/gitleaks.toml").decode())
    rules = {r["id"]: r for r in config["rules"] if "regex" in r}
    sources = [
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD", "cmd/generate/config/rules").decode().split()
        if p.endswith(".go") and not p.endswith("_test.go")
    ]
    cases, bare = [], []
    for path in sources:
        go = git(repo, "show", f"HEAD:{path}").decode()
        for body in re.split(r"\nfunc ", go)[1:]:
            m = re.search(r'RuleID:\s*"([^"]+)"', body)
            if not m or m.group(1) not in rules:
                continue
            rule = rules[m.group(1)]
            vendor = gitleaks_vendor(rule["id"])
            group = rule.get("secretGroup", 1 if (py_regex(rule["regex"]) or re.compile("")).groups else 0)
            got = _rule_cases(rule, body, group, rng)
            cases += [Case(vendor, rule["id"], line, secret) for line, secret in got]
            if not rule["regex"].lstrip("(?i)").startswith(r"[\w.-]{0,50}?") and "(?:" not in rule["regex"][:12]:
                generated = _generate(rule["regex"], group, rng)
                if generated:
                    bare.append(Case(vendor, rule["id"], f"value: {generated[1]}", generated[1]))
    return cases, bare


def _rule_cases(rule: dict, body: str, group: int, rng: random.Random) -> list[tuple[str, str]]:
    tps_at = body.find("tps")
    end = min(
        [i for i in (body.find("fps", tps_at), body.find("return utils.Validate", tps_at)) if i > 0] or [len(body)]
    )
    region = body[tps_at:end] if tps_at >= 0 else ""
    out: list[tuple[str, str]] = []
    for call in re.finditer(r"GenerateSampleSecrets?\(\s*(" + _GO_STRING + r")\s*,\s*", region):
        ident = _go_unquote(call.group(1))
        arg = _balanced(region, call.end())
        literal = re.fullmatch(r"\s*(" + _GO_STRING + r")\s*", arg)
        if literal:
            secret = _go_unquote(literal.group(1))
        else:
            generated = _generate(rule["regex"], group, rng)
            if not generated:
                continue
            secret = generated[1]
        forms = _NAMED_FORMS if "Secrets(" in call.group(0) else (_SINGLE_FORM,)
        for form in forms:
            out.append((form.format(i=ident.lower(), I=ident.upper(), s=secret), secret))
    # literal lines: string elements of the tps lists, outside those calls
    stripped = re.sub(r"GenerateSampleSecrets?\([^\n]*", "", region)
    for lit in re.finditer(r"(?<=[{,(\n])\s*(" + _GO_STRING + r")\s*(?=[,})])", stripped):
        before = stripped[: lit.start(1)].rstrip()[-1:]
        after = stripped[lit.end(1) :].lstrip()[:1]
        if before == "+" or after == "+":
            continue
        line = _go_unquote(lit.group(1))
        secret = _secret_of(rule, line)
        if secret:
            out.append((line, secret))
    if not out:
        for _ in range(2):
            generated = _generate(rule["regex"], group, rng)
            if generated:
                out.append(generated)
    return out


def _balanced(text: str, start: int) -> str:
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch in '"`':
            j = text.find(ch, i + 1) if ch == "`" else re.compile(r'"(?:[^"\\\n]|\\.)*"').match(text, i).end() - 1
            i = j + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return text[start:i]
            depth -= 1
        i += 1
    return text[start:]


# =============================================================================================
# Nosey Parker: the examples and negative examples its rules carry
# =============================================================================================

_NP_RULES = "crates/noseyparker/data/default/builtin/rules"
_NP_DEFAULT = "crates/noseyparker/data/default/builtin/rulesets/default.yml"
# Rules with several capture groups: which one is the secret (else the last; the others are a
# user name, a host or an id).
_NP_SECRET_GROUP = {"np.mongodb.1": 2, "np.postgres.1": 2}


def np_split(vendor: str) -> str:
    """`tune` or `held-out`: half the Nosey Parker vendors, by a fixed hash of the name, decided
    before any rule was changed for this corpus; only the tune half's misses are ever shown."""
    return "held-out" if hashlib.sha256(f"np-split-17:{vendor}".encode()).digest()[0] % 2 else "tune"


def noseyparker_cases(repo: Path) -> tuple[list[Case], list[Case], int]:
    """(positives, negatives, rules whose pattern Python cannot read) of the default ruleset.
    A positive is an example and the secret its rule's capture group finds in it (an example the
    converted pattern does not match is left out and counted with the unreadable). A negative is
    a negative example, unless the rule file marks it FIXME (a real secret the rule misses)."""
    import yaml  # evaluation only: pip install pyyaml

    default = set(yaml.safe_load(git(repo, "show", f"HEAD:{_NP_DEFAULT}"))["rulesets"][0]["include_rule_ids"])
    positives, negatives, unreadable = [], [], 0
    for path in git(repo, "ls-tree", "--name-only", "HEAD", f"{_NP_RULES}/").decode().split():
        if not path.endswith(".yml"):
            continue
        raw = git(repo, "show", f"HEAD:{path}").decode()
        vendor = normalise(Path(path).stem)
        fixme_lines = {i for i, line in enumerate(raw.split("\n")) if "FIXME" in line}
        root = yaml.compose(raw)
        for rule_node in _node(root, "rules").value:
            rule = yaml.safe_load(yaml.serialize(rule_node))
            if rule["id"] not in default:
                continue
            pattern = py_regex(rule["pattern"])
            for example in rule.get("examples") or []:
                m = pattern.search(example) if pattern else None
                if not m:
                    unreadable += 1
                    continue
                group = _np_group(rule["id"], m)
                positives.append(Case(vendor, rule["id"], example, m.group(group)))
            node = _node(rule_node, "negative_examples")
            for item in node.value if node is not None else []:
                if any(node.start_mark.line <= i < item.start_mark.line for i in fixme_lines):
                    continue  # after a FIXME comment: a secret the rule should have found
                negatives.append(Case(vendor, rule["id"], item.value, ""))
    return positives, negatives, unreadable


def _node(mapping, key: str):
    for k, v in mapping.value:
        if k.value == key:
            return v
    return None


def _np_group(rule_id: str, m: re.Match[str]) -> int:
    if rule_id in _NP_SECRET_GROUP:
        return _NP_SECRET_GROUP[rule_id]
    if rule_id == "np.gradle.1":  # username and password in either order
        return next(
            g
            for g in range(1, 3)
            if "password" in m.string[m.start(0) : m.start(g)].lower().rsplit("\n", 1)[-1] or g == 2
        )
    return m.re.groups or 0


# =============================================================================================
# Kingfisher (MongoDB's scanner, NP's rule format): the examples of rules for vendors Nosey Parker
# has no rule for
# =============================================================================================

_KF_RULES = "data/rules"


def kf_split(vendor: str) -> str:
    """`tune` or `held-out`: half the Kingfisher-only vendors, by a fixed hash of the name, decided
    before any case of this corpus was read (2026-11-25); only the tune half's misses are shown."""
    return "held-out" if hashlib.sha256(f"kf-split-25:{vendor}".encode()).digest()[0] % 2 else "tune"


def kingfisher_cases(repo: Path, np_repo: Path | None = None) -> tuple[list[Case], int]:
    """(positives, unreadable) of every rule's examples, for vendors that have no Nosey Parker rule
    file (those are already measured by noseyparker_cases). The secret is the last capture group
    of the rule's pattern (the whole match when it has none)."""
    import yaml  # evaluation only: pip install pyyaml

    np_vendors = set()
    if np_repo is not None:
        listing = git(np_repo, "ls-tree", "--name-only", "HEAD", f"{_NP_RULES}/").decode().split()
        np_vendors = {normalise(Path(p).stem) for p in listing if p.endswith(".yml")}
    positives, unreadable = [], 0
    for path in git(repo, "ls-tree", "--name-only", "HEAD", f"{_KF_RULES}/").decode().split():
        if not path.endswith(".yml"):
            continue
        vendor = normalise(Path(path).stem)
        if vendor in np_vendors:
            continue
        try:
            data = yaml.safe_load(git(repo, "show", f"HEAD:{path}").decode())
        except yaml.YAMLError:
            unreadable += 1
            continue
        for rule in (data or {}).get("rules") or []:
            pattern = py_regex(rule.get("pattern") or "")
            for example in rule.get("examples") or []:
                m = pattern.search(example) if pattern else None
                if not m or not m.group(m.re.groups or 0):
                    unreadable += 1
                    continue
                positives.append(Case(vendor, rule["id"], example, m.group(m.re.groups or 0)))
    return positives, unreadable


# =============================================================================================
# secretlint: its rules' snapshot fixtures
# =============================================================================================

_SL_PACKAGES = "packages/@secretlint"
# Rules that are policies rather than secrets (a file's name, a home directory, a Kubernetes
# `kind: Secret`, comment directives, user patterns, the example rule).
_SL_SKIP = {
    "pattern",
    "filter-comments",
    "example",
    "no-homedir",
    "no-dotenv",
    "no-k8s-kind-secret",
    "internal-test-cjs",
    "internal-test-esm",
    "preset-recommend",
    "preset-canary",
}
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.\-]*://[^:/@\s]*:([^@\s]+)@", re.I)


def secretlint_cases(repo: Path) -> tuple[list[Case], list[Case]]:
    """(positives, negatives) of the rules' test snapshots: a positive is each message of an
    `ng.*` snapshot (the secret: the reported range; for credentials in a URL, the password); a
    negative is an `ok.*` snapshot with no message. Snapshots with their own configuration are
    left out (they turn a detection off or on). Vendor: the rule's name."""
    files = git(repo, "ls-tree", "-r", "--name-only", "HEAD", f"{_SL_PACKAGES}/").decode().split("\n")
    configured = {f.rsplit("/", 1)[0] for f in files if f.endswith(("/.secretlintrc.json", "/options.ts"))}
    positives, negatives = [], []
    for path in files:
        m = re.fullmatch(_SL_PACKAGES + r"/secretlint-rule-([^/]+)/test/snapshots/([^/]+)/output\.json", path)
        if not m or m.group(1) in _SL_SKIP or path.rsplit("/", 1)[0] in configured:
            continue
        rule, name = m.groups()
        out = json.loads(git(repo, "show", f"HEAD:{path}"))
        text = out.get("sourceContent")
        if out.get("sourceContentType", "text") != "text" or not isinstance(text, str):
            continue
        vendor = normalise(rule.split("-")[0])
        if name.startswith("ok.") and not out["messages"]:
            negatives.append(Case(vendor, f"{rule}/{name}", text, ""))
            continue
        for message in out["messages"]:
            start, end = message["range"]
            secret = _utf16_slice(text, start, end)
            url = _URL_PASSWORD.match(secret)
            positives.append(Case(vendor, f"{rule}/{name}", text, url.group(1) if url else secret))
    return positives, negatives


def _utf16_slice(text: str, start: int, end: int) -> str:
    """JavaScript's ranges count UTF-16 code units."""
    raw = text.encode("utf-16-le")
    return raw[2 * start : 2 * end].decode("utf-16-le", "replace")
