"""How well bot/redact.py withholds secrets: recall on public secret-scanner suites, false
redactions on ordinary code. Everything is read from fetched mirrors at run time; nothing taken
from them is stored in this repository.

    python bench/eval_secrets.py [--mirrors DIR] [--days 14] [--show-misses 20] [--show-false 50]

Mirrors (bare git directories, as the search tool's `fetch` leaves them; `--mirrors` or
$SECRETS_MIRRORS, default /work/.mirror):
  Yelp+detect-secrets/repo  positives: every case its tests/plugins/*_test.py expect a plugin to
                            flag (high-entropy and IP plugins left out: no credential context);
                            the secret of a case is what detect-secrets' own plugin reports for it,
                            run from the mirror's source (needs pyyaml, requests, responses).
  gitleaks+gitleaks/repo    positives: each rule of cmd/generate/config/rules/*.go — its literal
                            true positives where given; for GenerateSampleSecret(s)(ident, secret)
                            the secret (literal, or generated from the rule's regex in
                            config/gitleaks.toml) placed in a few assignment forms of our own; for
                            rules without samples, lines generated from the regex itself. A second
                            line reports the vendor-shaped rules' secrets alone on a line, no name.
  astral-sh+uv/repo, astral-sh+ruff/repo, pydantic+pydantic-ai/repo (any present)
                            negatives: the added lines of every commit in the last --days days
                            before the mirror's newest commit, files the bot would send only
                            (lockfiles, binaries, generated and vendored files are never sent).
A missing mirror is reported on one line and skipped; the script always exits 0.
"""
from __future__ import annotations

import argparse
import importlib.util
import io
import os
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.diffs import skip_reason  # noqa: E402
from bot.models import FileChange  # noqa: E402
from bot.redact import MARK_PREFIX, redact  # noqa: E402

NEGATIVE_REPOS = ("astral-sh+uv", "astral-sh+ruff", "pydantic+pydantic-ai")


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True).stdout


def withheld(text: str, secret: str) -> bool:
    """Is no part of `secret` long enough to be useful left in the redacted text?"""
    out = redact(text).text
    if secret in out:
        return False
    return True


# =============================================================================================
# detect-secrets
# =============================================================================================

_DS_SKIP = {"base_test.py", "high_entropy_strings_test.py", "ip_public_test.py"}


def detect_secrets_cases(repo: Path) -> list[tuple[str, str, str]]:
    """(plugin file, line, secret) for every positive case of the plugin tests."""
    tmp = Path(tempfile.mkdtemp(prefix="ds-eval-"))
    tarfile.open(fileobj=io.BytesIO(git(repo, "archive", "HEAD", "detect_secrets", "tests", "testing"))).extractall(
        tmp, filter="data")
    sys.path.insert(0, str(tmp))
    from detect_secrets.plugins.base import BasePlugin  # noqa: E402  (the mirror's own source)

    cases: list[tuple[str, str, str]] = []
    for path in sorted((tmp / "tests" / "plugins").glob("*_test.py")):
        if path.name in _DS_SKIP:
            continue
        spec = importlib.util.spec_from_file_location(f"ds_eval_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        plugins = [v for v in vars(module).values()
                   if isinstance(v, type) and issubclass(v, BasePlugin) and v is not BasePlugin]
        for func in _parametrized(module):
            for mark in getattr(func, "pytestmark", []):
                if mark.name != "parametrize":
                    continue
                names = [n.strip() for n in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])]
                for values in mark.args[1]:
                    values = getattr(values, "values", values)
                    if not isinstance(values, (tuple, list)):
                        values = (values,)
                    case = dict(zip(names, values))
                    cases.extend(_positive(path.name, case, plugins))
    seen, unique = set(), []
    for case in cases:
        if case[1:] not in seen:
            seen.add(case[1:])
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


def _positive(file: str, case: dict, plugins) -> list[tuple[str, str, str]]:
    line = next((case[k] for k in ("payload", "line", "token") if isinstance(case.get(k), str)), None)
    if line is None:
        return []
    if "expected_secret" in case:
        secret = case["expected_secret"]
        return [(file, line, secret)] if secret else []
    flag = case.get("should_flag", case.get("expected"))
    if flag is not True:
        return []
    found = []
    for plugin in plugins:
        try:
            found += [s.secret_value for s in plugin().analyze_line(filename="mock_filename", line=line)]
        except TypeError:
            continue
    return [(file, line, found[0] if found else line.strip())]


# =============================================================================================
# gitleaks
# =============================================================================================

# Our own assignment forms for GenerateSampleSecret(s)(identifier, secret).
_NAMED_FORMS = ('{i}_token = "{s}"', "{I}_TOKEN={s}", "{i}Token: '{s}'", '"{i}_token": "{s}",',
                '{i}Token := "{s}"', 'export {I}_TOKEN="{s}"', "<{i}Token>{s}</{i}Token>",
                'System.setProperty("{I}_TOKEN", "{s}")')
_SINGLE_FORM = '{i}_api_token = "{s}"'
_GO_STRING = r'"(?:[^"\\\n]|\\.)*"|`[^`]*`'


def _go_unquote(literal: str) -> str:
    if literal.startswith("`"):
        return literal[1:-1]
    return bytes(literal[1:-1], "utf-8").decode("unicode_escape").encode("latin-1", "replace").decode("utf-8", "replace")


def _py_regex(go: str) -> re.Pattern[str] | None:
    flags = 0
    if "(?i)" in go:
        go, flags = go.replace("(?i)", ""), re.I
    for posix, cls in (("[:alnum:]", "a-zA-Z0-9"), ("[:alpha:]", "a-zA-Z"), ("[:digit:]", "0-9"),
                       ("[:upper:]", "A-Z"), ("[:lower:]", "a-z"), ("[:xdigit:]", "0-9a-fA-F"),
                       ("[:space:]", r"\s"), ("[:punct:]", r"!-/:-@\[-`{-~")):
        go = go.replace(posix, cls)
    go = go.replace(r"\z", r"\Z").replace("(?-i:", "(?:").replace("(?s:", "(?:")
    try:
        return re.compile(go, flags)
    except re.error:
        return None


def _sample(node_list, rng: random.Random, state) -> str:
    """A string matching an sre_parse tree (our own small generator)."""
    import re._constants as c  # noqa: PLC0415
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
    import re._constants as c  # noqa: PLC0415
    name = str(cat)
    if "DIGIT" in name and "NOT" not in name:
        return rng.choice("0123456789")
    if "SPACE" in name and "NOT" not in name:
        return " "
    if "WORD" in name and "NOT" not in name:
        return rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    return rng.choice("abcXYZ")


def _pick_in(items, rng) -> str:
    import re._constants as c  # noqa: PLC0415
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
    compiled = _py_regex(pattern)
    if compiled is None:
        return None
    import re._parser as p  # noqa: PLC0415
    tree = p.parse(compiled.pattern, compiled.flags)
    for _ in range(20):
        state: dict[int, str] = {}
        line = _sample(list(tree), rng, state)
        secret = state.get(group, line) if group else line
        if compiled.search(line) and secret.strip():
            return line, secret
    return None


def _secret_of(rule: dict, line: str) -> str | None:
    compiled = _py_regex(rule["regex"])
    if compiled is None:
        return None
    m = compiled.search(line)
    if not m:
        return None
    group = rule.get("secretGroup", 1 if compiled.groups else 0)
    return m.group(group) or m.group(0)


def gitleaks_cases(repo: Path, rng: random.Random) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """([(rule id, line, secret)], [(rule id, secret alone, secret)] for vendor-shaped rules)."""
    config = tomllib.loads(git(repo, "show", "HEAD:config/gitleaks.toml").decode())
    rules = {r["id"]: r for r in config["rules"] if "regex" in r}
    sources = [p for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD", "cmd/generate/config/rules").decode().split()
               if p.endswith(".go") and not p.endswith("_test.go")]
    cases, bare = [], []
    for path in sources:
        go = git(repo, "show", f"HEAD:{path}").decode()
        for body in re.split(r"\nfunc ", go)[1:]:
            m = re.search(r'RuleID:\s*"([^"]+)"', body)
            if not m or m.group(1) not in rules:
                continue
            rule = rules[m.group(1)]
            group = rule.get("secretGroup", 1 if (_py_regex(rule["regex"]) or re.compile("")).groups else 0)
            got = _rule_cases(rule, body, group, rng)
            cases += [(rule["id"], line, secret) for line, secret in got]
            if not rule["regex"].lstrip("(?i)").startswith(r"[\w.-]{0,50}?") and "(?:" not in rule["regex"][:12]:
                generated = _generate(rule["regex"], group, rng)
                if generated:
                    bare.append((rule["id"], f"value: {generated[1]}", generated[1]))
    return cases, bare


def _rule_cases(rule: dict, body: str, group: int, rng: random.Random) -> list[tuple[str, str]]:
    tps_at = body.find("tps")
    end = min([i for i in (body.find("fps", tps_at), body.find("return utils.Validate", tps_at)) if i > 0] or [len(body)])
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
        before = stripped[:lit.start(1)].rstrip()[-1:]
        after = stripped[lit.end(1):].lstrip()[:1]
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
        if ch in "\"`":
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
# ordinary code
# =============================================================================================

def negative_corpus(repo: Path, days: int, offset: int = 0) -> tuple[int, int, list[str], int]:
    """(added lines sent, false redactions, examples, commits) over `days` days ending `offset`
    days before the newest commit."""
    newest = int(git(repo, "log", "-1", "--format=%ct", "HEAD").decode()) - offset * 86400
    log = git(repo, "log", "--no-merges", "-p", "--no-color", "--no-ext-diff", "--format=%x00%H%n%B%x01",
              f"--since={newest - days * 86400}", f"--until={newest}", "HEAD").decode("utf-8", "replace")
    lines = flagged = commits = 0
    examples: list[str] = []
    for chunk in log.split("\x00")[1:]:
        commits += 1
        message, _, patch = chunk.partition("\x01")
        texts = [message]
        for part in re.split(r"\ndiff --git ", "\n" + patch)[1:]:
            m = re.match(r"a/(\S+) b/(\S+)", part)
            if not m:
                continue
            path = m.group(2)
            body = part[part.find("\n@@"):] if "\n@@" in part else ""
            f = FileChange(path=path, status="modified", additions=0, deletions=0, patch=body or None,
                           binary="Binary files" in part[:400])
            if skip_reason(f) is None and body:
                texts.append(path + "\n" + body)
        for text in texts:
            result = redact(text)
            is_message = text is message
            for before, after in zip(text.split("\n"), result.text.split("\n")):
                counted = is_message or (before.startswith("+") and not before.startswith("+++"))
                lines += counted
                if counted and after != before:
                    flagged += after.count(MARK_PREFIX) - before.count(MARK_PREFIX)
                    examples.append(f"{before[:160]}\n           -> {after[:160]}")
            if result.text.count("\n") != text.count("\n"):  # a block (PEM) was replaced: count it
                flagged += result.count
                examples.append(text[:160])
    return lines, flagged, examples, commits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", default=os.environ.get("SECRETS_MIRRORS", "/work/.mirror"))
    parser.add_argument("--days", type=int, default=14, help="days of ordinary code per negative repository")
    parser.add_argument("--offset-days", type=int, default=0,
                        help="end the ordinary-code window this many days before the newest commit (held-out runs)")
    parser.add_argument("--show-misses", type=int, default=15)
    parser.add_argument("--show-false", type=int, default=30)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    root = Path(args.mirrors)

    ds = root / "Yelp+detect-secrets" / "repo"
    if ds.is_dir():
        try:
            cases = detect_secrets_cases(ds)
        except ImportError as exc:
            print(f"detect-secrets: skipped, its plugins need {exc.name} (pip install pyyaml requests responses)")
        else:
            _report("detect-secrets plugin tests", cases, args.show_misses)
    else:
        print(f"detect-secrets: no mirror at {ds}; skipped")

    gl = root / "gitleaks+gitleaks" / "repo"
    if gl.is_dir():
        cases, bare = gitleaks_cases(gl, random.Random(args.seed))
        _report("gitleaks rules", cases, args.show_misses, per_rule=True)
        _report("gitleaks vendor shapes, no name on the line", bare, args.show_misses, per_rule=True)
    else:
        print(f"gitleaks: no mirror at {gl}; skipped")

    total_lines = total_flagged = 0
    for name in NEGATIVE_REPOS:
        repo = root / name / "repo"
        if not repo.is_dir():
            print(f"{name}: no mirror at {repo}; skipped")
            continue
        lines, flagged, examples, commits = negative_corpus(repo, args.days, args.offset_days)
        total_lines += lines
        total_flagged += flagged
        print(f"ordinary code {name.replace('+', '/')} (days -{args.offset_days + args.days}..-{args.offset_days}): {commits} commits, {lines} added lines, "
              f"{flagged} false redactions ({flagged * 10000 / max(lines, 1):.2f} per 10,000 lines)")
        for line in examples[:args.show_false]:
            print("    false:", line)
    if total_lines:
        print(f"ordinary code, all: {total_flagged} false redactions in {total_lines} added lines "
              f"= {total_flagged * 10000 / total_lines:.2f} per 10,000")
    return 0


def _report(name: str, cases, show: int, per_rule: bool = False) -> None:
    missed = [(src, line, secret) for src, line, secret in cases if not withheld(line, secret)]
    caught = len(cases) - len(missed)
    extra = ""
    if per_rule:
        by_rule = defaultdict(lambda: [0, 0])
        for src, line, secret in cases:
            by_rule[src][1] += 1
        for src, _, _ in missed:
            by_rule[src][0] += 1
        full = sum(1 for missed_n, _ in by_rule.values() if missed_n == 0)
        extra = f"; rules with every sample withheld: {full}/{len(by_rule)}"
    print(f"{name}: recall {caught}/{len(cases)} = {100 * caught / max(len(cases), 1):.1f}%{extra}")
    kinds = Counter(src for src, _, _ in missed)
    if kinds:
        print("    missed by source:", ", ".join(f"{k} {n}" for k, n in kinds.most_common(12)))
    for src, line, secret in missed[:show]:
        print(f"    missed [{src}] {line[:160]!r}")


if __name__ == "__main__":
    sys.exit(main())
