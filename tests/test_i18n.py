"""The message catalogue: both languages hold the same keys with the same fields."""
from string import Formatter

from bot.i18n import LANGS, catalogue, text


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(template) if name}


def test_every_key_in_both_languages_with_the_same_fields():
    zh, en = catalogue("zh"), catalogue("en")
    assert set(zh) == set(en), f"only in zh: {set(zh) - set(en)}; only in en: {set(en) - set(zh)}"
    for key in zh:
        assert _fields(zh[key]) == _fields(en[key]), key


def test_every_key_renders_in_every_language():
    for lang in LANGS:
        for key, template in catalogue(lang).items():
            filled = text(lang, key, **{name: "X" for name in _fields(template)})
            assert filled.strip(), key


def test_unknown_language_falls_back_to_chinese():
    assert text("fr", "common.language_name") == "中文"
