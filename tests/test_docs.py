"""The README stays true: it opens with the two commands, documents every setting, and .ci/run
runs the second command."""

from pathlib import Path

from settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_the_two_commands():
    block = README.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    assert block[0].endswith("python -m bot run") and block[1].endswith("python -m pytest")
    assert block[1] in (ROOT / ".ci" / "run").read_text()


def test_every_setting_is_documented():
    missing = [name.upper() for name in Settings.model_fields if f"`{name.upper()}`" not in README]
    assert missing == []
