"""Build the core's objects once, from settings, and hand them around (constructor injection)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.prompts import Prompts
from ..sources import CommitSource
from ..sources.opened import Sources

if TYPE_CHECKING:  # for the annotations only: build() imports them lazily (the LLM module imports openai)
    from settings import Settings

    from ..analysis.analyze import Analyzer
    from ..analysis.llm.client import LLM
    from ..answers.commit_qa import QA
    from ..core.store import Store
    from ..digest.builder import DigestBuilder
    from ..period_questions.answer import HistoryQA
    from ..report.service import Reports
    from ..taste.corrections import Corrections


@dataclass
class Services:
    settings: Settings
    store: Store
    prompts: Prompts
    llm: LLM | None
    analyzer: Analyzer
    builder: DigestBuilder
    qa: QA
    reports: Reports | None = None  # the digests' report pages and their signed links
    history: HistoryQA | None = None  # questions about a period
    corrections: Corrections | None = None  # readers' level corrections (bot/levels/)
    sources: Sources = field(init=False)  # one source per repository for the process's lifetime

    def __post_init__(self) -> None:
        self.sources = Sources(self.settings)

    @classmethod
    def build(
        cls, settings: Settings, store: Store | None = None, clock: Callable[[], datetime] | None = None
    ) -> Services:
        from ..analysis.analyze import Analyzer
        from ..answers.commit_qa import QA
        from ..core.store import open_store
        from ..digest.builder import DigestBuilder, utcnow
        from ..report.service import Reports
        from ..taste.corrections import Corrections

        store = store or open_store(settings)
        if settings.github_app_enabled:  # its key checked now, its tokens kept in this store
            from ..sources.github.installations import app_for

            app_for(settings, store)
        # Readers' level corrections: laid over every digest shown, and labelled examples for
        # the learned profiles of the weeks after them.
        corrections = Corrections(store)
        prompts = Prompts(settings.prompts_dir)
        llm = None
        if settings.llm_enabled:
            from ..analysis.cost import Budget
            from ..analysis.llm.client import LLM

            # what it learns about the endpoint outlives the process; its tokens count for the month
            month = Budget(
                store,
                settings.llm_monthly_token_budget,
                clock or utcnow,
                per_workspace=settings.llm_monthly_token_budget_per_workspace,
            )
            llm = LLM(settings, memory=store, budget=month)
        analyzer = Analyzer(llm, prompts, settings)
        taste = None
        if settings.learn_from_release_notes:
            from ..taste.book import TasteBook

            taste = TasteBook(store, corrections=corrections, history_limit=settings.learn_history_commits)
        builder = DigestBuilder(
            store, analyzer, llm, prompts, settings, clock=clock or utcnow, taste=taste, corrections=corrections
        )
        from ..period_questions.answer import HistoryQA
        from ..period_questions.index import INDEX_FILE, HistoryIndex
        from ..period_questions.retrieve import Retriever

        return cls(
            settings,
            store,
            prompts,
            llm,
            analyzer,
            builder,
            QA(builder, llm, prompts, settings),
            Reports(store, settings, clock=clock or utcnow, corrections=corrections),
            HistoryQA(
                Retriever(builder, HistoryIndex(Path(settings.data_dir) / INDEX_FILE), settings), llm, prompts, settings
            ),
            corrections,
        )

    def source(self, repo: str) -> CommitSource:
        """One source object per repository for the process's lifetime (they hold HTTP pools)."""
        return self.sources.get(repo)

    async def aclose(self, finish_learning: bool = False) -> None:
        """`finish_learning`: wait for the profiles being learnt in the background (a one-shot CLI
        run, so that its next run finds them); a long-running process stops them instead."""
        taste = self.builder.taste
        if taste is not None:
            if finish_learning:
                await taste.settle()
            await taste.aclose()
        if self.llm is not None:
            await self.llm.aclose()
        await self.store.close()
