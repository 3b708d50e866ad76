"""The documentation stays true: the README opens with the two commands and stays short, the
configuration page documents every setting exactly as settings.py describes it, the docs site
holds every page, and .ci/run runs the second command and builds the site strictly."""

import importlib.util
import re
from pathlib import Path

from settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
CONFIG_PAGE = (DOCS / "configuration.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_config_docs", ROOT / "tools" / "gen_config_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_opens_with_the_two_commands():
    block = README.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    assert block[0].endswith("python -m bot run") and block[1].endswith("python -m pytest")
    assert block[1] in CI


def test_readme_is_at_most_15_kb():
    assert len(README.encode("utf-8")) <= 15 * 1024


def test_readme_links_lead_somewhere():
    targets = [t for t in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README) if "://" not in t]
    assert targets
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert missing == []


def test_the_digest_pictures_are_there_and_small():
    for name in ("digest-slack.png", "digest-feishu.png"):
        picture = DOCS / "images" / name
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert picture.stat().st_size < 200 * 1024
        assert f"docs/images/{name}" in README


def test_every_setting_is_documented():
    missing = [name.upper() for name in Settings.model_fields if f"| `{name.upper()}` |" not in CONFIG_PAGE]
    assert missing == []


def test_every_setting_is_documented_as_settings_py_describes_it():
    for name, field in Settings.model_fields.items():
        row = next(line for line in CONFIG_PAGE.splitlines() if line.startswith(f"| `{name.upper()}` |"))
        assert row.endswith(f"| {field.description.replace('|', chr(92) + '|')} |"), name


def test_the_configuration_page_and_env_example_are_generated_from_settings_py():
    gen = _generator()
    assert gen.page(CONFIG_PAGE) == CONFIG_PAGE, "run tools/gen_config_docs.py"
    assert (ROOT / ".env.example").read_text(encoding="utf-8") == gen.env_example(), "run tools/gen_config_docs.py"


def test_env_example_names_every_setting_and_holds_no_secret():
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    for name, field in Settings.model_fields.items():
        line = next(x for x in example.splitlines() if x.startswith(f"# {name.upper()}="))
        if "SecretStr" in str(field.annotation):
            assert line == f"# {name.upper()}=", line
    assert all(x.startswith("#") or not x.strip() for x in example.splitlines())  # nothing set by copying it


def test_every_docs_page_is_in_the_site_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", nav, flags=re.M))
    assert listed == {p.name for p in DOCS.glob("*.md")}


def test_ci_builds_the_docs_strictly():
    assert "mkdocs build --strict" in CI and ".[docs]" in CI
    extras = (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("\ndocs = [", 1)[1].split("]", 1)[0]
    assert '"mkdocs>=' in extras and '"mkdocs-material>=' in extras
