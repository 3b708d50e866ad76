"""Build the core's objects once, from settings, and hand them around (constructor injection)."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from .prompts import Prompts
from .sources import CommitSource, open_source


@dataclass
class Services:
    settings: object
    store: object
    prompts: Prompts
    llm: object | None
    analyzer: object
    builder: object
    qa: object
    reports: object = None  # bot.report.Reports: the digests' report pages and their signed links
    history: object = None  # bot.history.HistoryQA: questions about a period
    _sources: OrderedDict[str, CommitSource] = field(default_factory=OrderedDict)
    max_sources: int = 256  # chat users can name any repository: keep the most recent ones

    @classmethod
    def build(cls, settings, store=None, clock=None) -> "Services":
        from .analysis.analyze import Analyzer
        from .digest import DigestBuilder, utcnow
        from .explain import QA
        from .report import Reports
        from .store import open_store

        store = store or open_store(settings)
        prompts = Prompts(settings.prompts_dir)
        llm = None
        if settings.llm_enabled:
            from .analysis.llm import LLM
            llm = LLM(settings, memory=store)  # what it learns about the endpoint outlives the process
        analyzer = Analyzer(llm, prompts, settings)
        builder = DigestBuilder(store, analyzer, llm, prompts, settings, clock=clock or utcnow)
        from .history import build_history

        return cls(settings, store, prompts, llm, analyzer, builder, QA(builder, llm, prompts, settings),
                   Reports(store, settings, clock=clock or utcnow), build_history(builder, llm, prompts, settings))

    def source(self, repo: str) -> CommitSource:
        """One source object per repository for the process's lifetime (they hold HTTP pools)."""
        key = repo.strip()
        if key not in self._sources:
            self._sources[key] = open_source(key, self.settings)
            while len(self._sources) > self.max_sources:
                self._sources.popitem(last=False)
        self._sources.move_to_end(key)
        return self._sources[key]

    async def aclose(self) -> None:
        if self.llm is not None:
            await self.llm.aclose()
        await self.store.close()
