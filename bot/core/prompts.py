"""Prompt templates live in `prompts/` as files: `{job}.{lang}.j2`.

`prompts` is a package: the templates ship inside the wheel and are read with importlib.resources,
so an installed bot finds them from any working directory. PROMPTS_DIR names a folder of the
operator's own templates; a file there replaces the shipped one of the same name, and the others
stay the shipped ones.

A file holds the system message, a line `=== user ===`, then the user message. Both parts are
Jinja2 with StrictUndefined, so a missing variable fails loudly in tests instead of silently
producing an empty prompt. The file's hash is part of the analysis cache key: editing a prompt
re-analyses.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2

SEPARATOR = "=== user ==="


@dataclass(frozen=True)
class RenderedPrompt:
    system: str
    user: str

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


class Prompts:
    def __init__(self, directory: Path | None = None):
        """The shipped templates, each replaced by a file of the same name in `directory` if any."""
        self.directory = Path(directory) if directory is not None else None
        self.shipped = resources.files("prompts")
        self._env = jinja2.Environment(
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._cache: dict[str, tuple[jinja2.Template, jinja2.Template, str]] = {}

    def names(self) -> list[str]:
        names = {p.name for p in self.shipped.iterdir() if p.name.endswith(".j2")}
        if self.directory is not None:
            names |= {p.name for p in self.directory.glob("*.j2")}
        return sorted(names)

    def _source(self, filename: str):
        if self.directory is not None and (self.directory / filename).is_file():
            return self.directory / filename
        shipped = self.shipped / filename
        if shipped.is_file():
            return shipped
        where = f"{self.directory} or the shipped templates" if self.directory is not None else "the shipped templates"
        raise FileNotFoundError(f"prompt template {filename} is missing from {where}")

    def _load(self, job: str, lang: str):
        filename = f"{job}.{lang}.j2"
        if filename not in self._cache:
            raw = self._source(filename).read_text(encoding="utf-8")
            system, sep, user = raw.partition(f"\n{SEPARATOR}\n")
            if not sep:
                raise ValueError(f"prompt template {filename} has no '{SEPARATOR}' line")
            digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
            self._cache[filename] = (self._env.from_string(system), self._env.from_string(user), digest)
        return self._cache[filename]

    def render(self, job: str, lang: str, **variables) -> RenderedPrompt:
        system, user, _ = self._load(job, lang)
        return RenderedPrompt(system.render(**variables).strip(), user.render(**variables).strip())

    def hash(self, job: str, lang: str) -> str:
        return self._load(job, lang)[2]
