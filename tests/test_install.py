"""A normal install, not the editable one CI uses: build the wheel, install it into a fresh venv,
and run an LLM digest from a directory that holds none of the source. An editable install reads
the prompt templates from the checkout and hides a wheel that lacks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
SH = ZoneInfo("Asia/Shanghai")
NOT_SHIPPED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".data",
    ".mutation",
    ".pytest_cache",
    "tests",
    "bench",
    "tools",
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The Python of a fresh venv holding only the built wheel; its dependencies are borrowed from
    this test's environment through a .pth line (the path is added, the editable install's own
    .pth hooks there are not run), so nothing is downloaded but the build backend."""
    tmp = tmp_path_factory.mktemp("install")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SHIPPED)
    wheels = tmp / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = wheels.glob("digest_bot-*.whl")
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    (site / "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    return python


def clean_env(**extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONPATH"
        and not k.startswith(("SLACK_", "OPENAI_", "REDIS_", "DEFAULT_", "FEISHU_", "GITHUB_", "LLM_", "PROMPTS_"))
    }
    env.update(extra)
    return env


def test_the_wheel_is_what_runs(installed, tmp_path):
    """Guard for the test below: the modules come from the venv, not from the checkout."""
    probe = "import bot, prompts, settings; print(bot.__file__); print(settings.__file__)"
    out = subprocess.run([str(installed), "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=clean_env())
    assert out.returncode == 0, out.stderr
    assert all(line.startswith(str(installed.parent.parent)) for line in out.stdout.splitlines()), out.stdout


def test_an_installed_bot_analyses_with_the_llm_from_any_directory(installed, tmp_path, redis_url):
    repo = GitRepo(tmp_path / "widgets")
    repo.commit(
        "feat: add CSV export (#7)",
        {"src/export.py": "import csv\n\ndef export(rows):\n    return csv.writer(rows)\n"},
        when=datetime(2026, 1, 28, 9, 30, tzinfo=SH),
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with FakeOpenAI() as llm:
        proc = subprocess.run(
            [str(installed), "-m", "bot", "digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en"],
            capture_output=True,
            text=True,
            cwd=elsewhere,
            timeout=300,
            env=clean_env(
                OPENAI_BASE_URL=llm.url,
                OPENAI_API_KEY="sk-test-install-1234",
                REDIS_URL=redis_url,
                REDIS_PREFIX="install:",
                DATA_DIR=str(tmp_path / "data"),
            ),
        )
        asked = [r for r in llm.requests if "feat: add CSV export" in r["messages"][-1]["content"]]
    assert proc.returncode == 0, proc.stderr  # 3 would mean: no commit got an LLM analysis
    assert proc.stderr == ""
    assert asked, "the analysis prompt never reached the endpoint"
    assert "feat: add CSV export" in proc.stdout and "offline analysis" not in proc.stdout
