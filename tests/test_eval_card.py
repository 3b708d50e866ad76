"""The model report card as an operator runs it: a real `python -m bot eval` process, a real git
repository (and a bare mirror of it), a labels file written here, and the fake OpenAI endpoint
answering by the commit's title — so every figure on the card is known in advance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.fakes.openai_server import FakeOpenAI, commit_facts, good_answer, request_lang, server_tokens

ROOT = Path(__file__).resolve().parent.parent
SH = ZoneInfo("Asia/Shanghai")
REPO = "acme/widgets"

# title → (the maintainer's label, what the fake model answers)
COMMITS = {
    "docs: fix a typo in the README": ("low", "low"),
    "ci: run the test workflow on Python 3.13": ("low", "medium"),  # the model overrates CI
    "feat: add a --since flag to the export command": ("medium", "medium"),
    "fix!: drop the legacy config format": ("high", "high"),
}
FILES = {
    "docs: fix a typo in the README": {"README.md": "# Widgets\n\nExport your widgets.\n"},
    "ci: run the test workflow on Python 3.13": {
        ".github/workflows/test.yml": "on: push\njobs:\n  test:\n    strategy:\n      matrix:\n"
        "        python: ['3.12', '3.13']\n"
    },
    "feat: add a --since flag to the export command": {
        "src/widgets/cli.py": "import argparse\n\ndef parser():\n    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--since')\n    return p\n"
    },
    "fix!: drop the legacy config format": {"src/widgets/config.py": "def load(path):\n    return read_toml(path)\n"},
}


def model_level(request: dict) -> str | None:
    title, _ = commit_facts(request)
    return next((answer for t, (_, answer) in COMMITS.items() if t == title), None)


def by_title(request: dict) -> str:
    """The fake model: a valid analysis at the level COMMITS gives the commit's title."""
    reason = "根据这个提交的 diff 判断。" if request_lang(request) == "zh" else "Judged from the diff of this commit."
    return good_answer(request, importance=model_level(request) or "low", importance_reason=reason)


@pytest.fixture
def widgets(tmp_path):
    """A local repository with the four commits (origin names it acme/widgets), its labels file,
    and a bare mirror of it laid out as mirrors/acme+widgets/repo."""
    from tests.gitrepo import GitRepo

    repo = GitRepo(tmp_path / "widgets", bare_origin=f"https://github.com/{REPO}.git")
    repo.commit(
        "chore: initial layout",
        {
            "README.md": "# Widgets\n\nExport you widgets.\n",
            "src/widgets/config.py": "def load(path):\n    if path.endswith('.ini'):\n"
            "        return read_ini(path)\n"
            "    return read_toml(path)\n",
        },
        when=datetime(2026, 1, 27, 9, 0, tzinfo=SH),
    )
    lines = []
    for i, (title, (label, _)) in enumerate(COMMITS.items()):
        sha = repo.commit(title, FILES[title], when=datetime(2026, 1, 28, 9 + i, 0, tzinfo=SH))
        lines.append(json.dumps({"repo": REPO, "sha": sha, "level": label, "type": "other", "reason": "test"}))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(lines) + "\n")
    mirrors = tmp_path / "mirrors"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(repo.path), str(mirrors / "acme+widgets" / "repo")],
        check=True,
        capture_output=True,
    )
    return repo, labels, mirrors


@pytest.fixture
def run(tmp_path):
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "DIGEST_EVAL_"))
    }
    base_env.update({"DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT), "DEFAULT_LANG": "en"})

    def invoke(*args: str, env: dict | None = None, cwd: Path = tmp_path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", "eval", *args],
            capture_output=True,
            text=True,
            env={**base_env, **(env or {})},
            cwd=cwd,
            timeout=120,
        )

    return invoke


def llm_env(fake: FakeOpenAI) -> dict:
    return {
        "OPENAI_BASE_URL": fake.url,
        "OPENAI_API_KEY": "sk-test-1",
        "LLM_MODEL": "tiny-judge",
        "LLM_CONCURRENCY": "2",
        "LLM_MAX_RETRIES": "0",
    }


def one_error(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def card_rows(stdout: str) -> dict[str, list[str]]:
    """The score table: row name → its cells (split on runs of two or more spaces)."""
    import re

    rows = {}
    for line in stdout.splitlines():
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) >= 2:
            rows.setdefault(parts[0], parts[1:])
    return rows


# --- the card's figures ------------------------------------------------------------------------------


def test_json_card_scores_the_model_and_the_rules_side_by_side(run, widgets):
    _, labels, mirrors = widgets
    with FakeOpenAI(by_title) as fake:
        proc = run("--labels", str(labels), "--mirrors", str(mirrors), "--format", "json", env=llm_env(fake))
        requests = list(fake.requests)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    card = json.loads(proc.stdout)
    assert card["commits"] == 4 and card["repos"] == {REPO: 4} and card["left_out"] == {}
    llm = card["llm"]
    assert llm["model"] == "tiny-judge" and llm["endpoint"].startswith("127.0.0.1:")
    assert llm["accepted"] == 4 and llm["accepted_rate"] == 1.0 and llm["fallbacks"] == {}
    scores = llm["scores"]
    # pairs (label, model): (low, low) (low, medium) (medium, medium) (high, high)
    # κ = (3/4 − 5/16) / (1 − 5/16) = 7/11
    assert scores["kappa"] == round(7 / 11, 4)
    assert scores["exact"] == 3 and scores["above_low_agreement"] == 3
    assert scores["either_above_low"] == 3 and scores["either_above_low_agreement"] == 2
    assert scores["rated_higher"] == 1 and scores["rated_lower"] == 0
    assert scores["confusion"] == {
        "high": {"high": 1, "medium": 0, "low": 0},
        "medium": {"high": 0, "medium": 1, "low": 0},
        "low": {"high": 0, "medium": 1, "low": 1},
    }
    # what the endpoint reported, summed: the fake's usage is its own tokenizer over each request
    assert llm["calls"] == len(requests) == 4
    assert llm["prompt_tokens"] == sum(server_tokens(r) for r in requests)
    assert llm["completion_tokens"] > 0 and llm["seconds"] > 0
    # the rule-based analyser on the same commits, and on all of them (here the same)
    assert llm["rules_same_commits"] == {k: v for k, v in card["rules"].items() if k != "seconds"}
    assert card["rules"]["commits"] == 4
    assert sum(sum(row.values()) for row in card["rules"]["confusion"].values()) == 4


def test_text_card_prints_the_table_the_cost_and_the_confusion_matrices(run, widgets):
    _, labels, mirrors = widgets
    with FakeOpenAI(by_title) as fake:
        proc = run("--labels", str(labels), "--mirrors", str(mirrors), "--lang", "en", env=llm_env(fake))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"Model report card: 4 labelled commits from {labels} ({REPO} 4)\n")
    assert "LLM: tiny-judge at 127.0.0.1:" in out
    rows = card_rows(out)
    assert rows["commits scored"][0] == "4"
    assert rows["same level"][0] == "3 (75%)"
    assert rows["Cohen's κ"][0] == "0.64"
    assert rows["low vs above-low agreement"][0] == "3 (75%)"
    assert rows["same level where either says above low"][0] == "2/3 (67%)"
    assert rows["rated above the label"][0] == "1"
    assert "Accepted answers: 4/4 (100%)." in out
    assert "prompt +" in out and "completion in 4 LLM calls" in out
    llm_matrix = out.split("Confusion matrix, LLM (rows: the labels, columns: predicted)\n")[1].splitlines()
    assert [line.split() for line in llm_matrix[:4]] == [
        ["high", "medium", "low"],
        ["high", "1", "0", "0"],
        ["medium", "0", "1", "0"],
        ["low", "0", "1", "1"],
    ]
    assert "Confusion matrix, rules" in out


def test_rejected_answers_are_fallbacks_and_the_model_is_scored_on_the_rest(run, widgets):
    _, labels, mirrors = widgets

    def rejects_ci(request):  # not JSON, twice (the retry too): the commit falls back
        return "I think this is fine." if commit_facts(request)[0].startswith("ci:") else by_title(request)

    with FakeOpenAI(rejects_ci) as fake:
        proc = run("--labels", str(labels), "--mirrors", str(mirrors), "--format", "json", env=llm_env(fake))
        requests = len(fake.requests)
    assert proc.returncode == 0, proc.stderr
    llm = json.loads(proc.stdout)["llm"]
    assert llm["accepted"] == 3 and llm["accepted_rate"] == 0.75 and llm["fallbacks"] == {"rejected": 1}
    assert llm["calls"] == requests == 5  # one corrective retry
    assert llm["scores"]["commits"] == 3 and llm["scores"]["kappa"] == 1.0 and llm["scores"]["exact"] == 3
    assert llm["rules_same_commits"]["commits"] == 3

    with FakeOpenAI(rejects_ci) as fake:
        text = run("--labels", str(labels), "--mirrors", str(mirrors), "--lang", "en", env=llm_env(fake)).stdout
    assert "Accepted answers: 3/4 (75%); fallbacks: rejected 1." in text
    header = text.splitlines()[3].split("  ")
    assert [cell.strip() for cell in header if cell.strip()] == ["LLM", "rules", "rules, all commits"]
    assert card_rows(text)["commits scored"] == ["3", "3", "4"]
    assert card_rows(text)["Cohen's κ"][0] == "1.00"


def test_no_accepted_answer_still_prints_the_card_and_exits_3(run, widgets):
    _, labels, mirrors = widgets
    with FakeOpenAI(lambda request: "no") as fake:
        proc = run("--labels", str(labels), "--mirrors", str(mirrors), "--format", "json", env=llm_env(fake))
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["llm"]["accepted"] == 0
    assert proc.stderr.strip() == (
        "The LLM's answer passed the checks for none of the 4 commits: every one fell "
        "back to the rule-based analysis (see the fallbacks)."
    )


def test_without_an_llm_the_card_has_the_rules_only_and_says_so(run, widgets):
    _, labels, mirrors = widgets
    proc = run("--labels", str(labels), "--format", "json", env={"DIGEST_EVAL_MIRRORS": str(mirrors)})
    assert proc.returncode == 0
    assert proc.stderr.strip() == (
        "No LLM is configured (set OPENAI_BASE_URL or OPENAI_API_KEY): the card shows the rule-based analyser only."
    )
    card = json.loads(proc.stdout)
    assert card["llm"] is None and card["rules"]["commits"] == 4
    text = run("--labels", str(labels), env={"DIGEST_EVAL_MIRRORS": str(mirrors)}).stdout
    assert "rules, all commits" in text and "Confusion matrix, rules" in text and "LLM" not in text


def test_zh_card(run, widgets):
    _, labels, mirrors = widgets
    with FakeOpenAI(by_title) as fake:
        proc = run("--labels", str(labels), "--mirrors", str(mirrors), "--lang", "zh", env=llm_env(fake))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("模型成绩单：")
    assert card_rows(proc.stdout)["Cohen's κ"][0] == "0.64"
    assert "混淆矩阵，LLM（行：标注，列：预测）" in proc.stdout


# --- where the commits come from ----------------------------------------------------------------------


def test_repo_flag_reads_a_local_path_and_limit_takes_the_first_commits(run, widgets):
    repo, labels, _ = widgets
    for spec in (str(repo.path), f"{REPO}={repo.path}"):
        proc = run("--labels", str(labels), "--repo", spec, "--limit", "2", "--format", "json")
        assert proc.returncode == 0, proc.stderr
        card = json.loads(proc.stdout)
        assert (
            card["commits"] == 2
            and card["rules"]["confusion"]["low"]["low"]
            + card["rules"]["confusion"]["low"]["medium"]
            + card["rules"]["confusion"]["low"]["high"]
            == 2
        )


def test_repo_flag_scores_only_the_named_repositories_and_says_what_was_left_out(run, widgets, tmp_path):
    repo, labels, _ = widgets
    extra = json.dumps({"repo": "other/thing", "sha": "0" * 40, "level": "low"})
    labels.write_text(labels.read_text() + extra + "\n")
    proc = run("--labels", str(labels), "--repo", f"{REPO}={repo.path}", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "Left out the labelled commits of other/thing (1): no --repo given for it." in proc.stderr
    card = json.loads(proc.stdout)
    assert card["commits"] == 4 and card["left_out"] == {"other/thing": 1}


def test_default_labels_are_the_projects_own_when_run_from_its_tree(run, widgets, tmp_path):
    _, labels, mirrors = widgets
    project = tmp_path / "project"
    (project / "tests" / "data").mkdir(parents=True)
    (project / "tests" / "data" / "importance_labels.jsonl").write_text(labels.read_text())
    proc = run("--mirrors", str(mirrors), "--format", "json", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["labels"] == str(Path("tests") / "data" / "importance_labels.jsonl")


# --- bad input: one sentence, exit 2, before any analysis ------------------------------------------------


def test_no_labels_file_in_this_directory(run, tmp_path):
    assert one_error(run()) == (
        "error: No labels file: give --labels FILE (a JSONL of labelled commits; the project's own, "
        "tests/data/importance_labels.jsonl, is in its source tree, not in the installed package)."
    )


def test_missing_labels_file(run, tmp_path):
    assert (
        one_error(run("--labels", str(tmp_path / "nope.jsonl")))
        == f"error: The labels file {tmp_path / 'nope.jsonl'} does not exist."
    )


@pytest.mark.parametrize(
    "bad",
    [
        "{not json",
        '{"repo": "acme/widgets", "sha": "abc1234", "level": "urgent"}',
        '["acme/widgets", "abc1234", "low"]',
        '{"repo": "widgets", "sha": "a", "level": "low"}',
    ],
)
def test_bad_labels_line(run, tmp_path, bad):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"repo": REPO, "sha": "abc1234", "level": "low"}) + "\n" + bad + "\n")
    assert one_error(run("--labels", str(labels), "--mirrors", str(tmp_path))) == (
        f"error: Line 2 of {labels} is not a labelled commit: expected a JSON object with repo (owner/name), "
        "sha and level (high, medium or low)."
    )


def test_empty_labels_file(run, tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n\n")
    assert one_error(run("--labels", str(labels))) == f"error: {labels} holds no labelled commits."


def test_no_mirrors_and_no_repo(run, widgets):
    _, labels, _ = widgets
    assert one_error(run("--labels", str(labels))) == (
        f"error: Nowhere to read the labelled commits of {REPO} from: give --repo {REPO}=PATH, or --mirrors DIR "
        "(or DIGEST_EVAL_MIRRORS) holding DIR/OWNER+NAME/repo."
    )


def test_mirrors_without_the_labelled_repository(run, widgets, tmp_path):
    _, labels, _ = widgets
    empty = tmp_path / "empty"
    empty.mkdir()
    assert one_error(run("--labels", str(labels), "--mirrors", str(empty))) == (
        f"error: No mirror of {REPO} under {empty} (expected {empty}/OWNER+NAME/repo): fetch it, "
        f"or give --repo {REPO}=PATH."
    )
    assert (
        one_error(run("--labels", str(labels), "--mirrors", str(tmp_path / "absent")))
        == f"error: The mirrors folder {tmp_path / 'absent'} does not exist."
    )


def test_repo_flag_naming_an_unlabelled_repository(run, widgets):
    repo, labels, _ = widgets
    assert (
        one_error(run("--labels", str(labels), "--repo", f"other/thing={repo.path}"))
        == f"error: --repo names other/thing, which the labels file does not label (it labels {REPO})."
    )


def test_labelled_commit_missing_from_the_repository(run, widgets):
    repo, labels, _ = widgets
    labels.write_text(labels.read_text() + json.dumps({"repo": REPO, "sha": "1234567", "level": "low"}) + "\n")
    assert one_error(run("--labels", str(labels), "--repo", str(repo.path))) == (
        f"error: Line 5 of the labels: commit 1234567 is not in {REPO} as read from {repo.path}."
    )


def test_limit_below_one(run, widgets):
    _, labels, mirrors = widgets
    assert (
        one_error(run("--labels", str(labels), "--mirrors", str(mirrors), "--limit", "0"))
        == "error: --limit must be at least 1, not 0."
    )


# --- bench/eval_importance.py shares the loading and the scores --------------------------------------------


def bench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_EVAL_")}
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "eval_importance.py"), *args],
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        timeout=120,
    )


def test_bench_without_mirrors_says_so_in_one_line():
    proc = bench()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "no mirrors given (--mirrors DIR or $DIGEST_EVAL_MIRRORS): nothing to evaluate "
        "(fetch the labelled repositories first)\n"
    )


def test_bench_skips_a_repository_without_a_mirror_and_scores_the_rest(widgets):
    _, labels, mirrors = widgets
    labels.write_text(labels.read_text() + json.dumps({"repo": "other/thing", "sha": "1234567", "level": "low"}) + "\n")
    proc = bench("--labels", str(labels), env={"DIGEST_EVAL_MIRRORS": str(mirrors)})
    assert proc.returncode == 0, proc.stderr
    assert f"mirror of other/thing not found under {mirrors}: its commits are skipped" in proc.stdout
    assert "commits evaluated: 4" in proc.stdout
    card = run_json_rules(labels, mirrors)
    assert f"Cohen's kappa: {card['kappa']:.2f}" in proc.stdout
    assert f"exact agreement: {card['exact']}/4" in proc.stdout


def test_bench_opens_with_one_line_of_the_four_figures_per_analyser(widgets):
    """The line the lead reads off a new labelled file: κ3, exact, above-low recall and missed highs,
    for the rules alone and (with --learned) as digests judge, each scored like the card does."""
    _, labels, mirrors = widgets
    card = run_json_rules(labels, mirrors)
    labelled = [json.loads(line)["level"] for line in labels.read_text().splitlines()]
    above = sum(level != "low" for level in labelled)
    for args, names in (
        ((), ["rules only"]),
        (("--learned",), ["rules only", "as digests judge (rules + learned profile)"]),
    ):
        proc = bench("--labels", str(labels), "--mirrors", str(mirrors), *args)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0] == "commits evaluated: 4"
        for line, name in zip(lines[1 : 1 + len(names)], names, strict=True):
            assert line.startswith(f"{name}: κ3 {card['kappa']:.2f} · exact {card['exact']}/4 · above-low recall ")
            assert f"/{above} (" in line and line.endswith(" · missed highs 0")
        assert lines[1 + len(names)] == ""  # then the confusion matrix, as before


def run_json_rules(labels: Path, mirrors: Path) -> dict:
    """The rule-based column of `python -m bot eval` for the labels of acme/widgets."""
    mine = labels.parent / "widgets-only.jsonl"
    mine.write_text("".join(line + "\n" for line in labels.read_text().splitlines() if REPO in line))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DIGEST_EVAL_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "eval", "--labels", str(mine), "--mirrors", str(mirrors), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "PYTHONPATH": str(ROOT), "DATA_DIR": str(labels.parent / "data")},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["rules"]


def test_repo_flag_reads_github_with_the_pr_text_a_digest_would_send(run, fake_github, tmp_path):

    from tests.fakes.github_server import FakeFile

    fake_github.add_repo("octo/widgets")
    sha = fake_github.add_commit(
        "octo/widgets",
        "feat: add a knob (#12)",
        committed_at=datetime(2026, 1, 28, 3, 0, tzinfo=UTC),
        files=[FakeFile("src/knob.py", "added", additions=10)],
    )
    fake_github.add_pull("octo/widgets", 12, body="Why the knob exists: operators asked for it.")
    labels = tmp_path / "gh.jsonl"
    labels.write_text(json.dumps({"repo": "octo/widgets", "sha": sha[:10], "level": "medium"}) + "\n")
    with FakeOpenAI(lambda request: good_answer(request, importance="medium")) as fake:
        proc = run(
            "--labels",
            str(labels),
            "--repo",
            "octo/widgets",
            "--format",
            "json",
            env={**llm_env(fake), "GITHUB_API_URL": fake_github.url},
        )
        prompts = [m["content"] for r in fake.requests for m in r["messages"] if m["role"] == "user"]
    assert proc.returncode == 0, proc.stderr
    card = json.loads(proc.stdout)
    assert card["llm"]["accepted"] == 1 and card["llm"]["scores"]["exact"] == 1
    assert any("operators asked for it" in p for p in prompts)


def test_errors_in_chinese_with_lang_zh(run, tmp_path):
    proc = run("--labels", str(tmp_path / "nope.jsonl"), "--lang", "zh")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == f"错误：标注文件 {tmp_path / 'nope.jsonl'} 不存在。\n"
