"""How many of the endpoint's tokens one locally estimated token is — an upper bound, learnt from
the prompt counts the endpoint reports, per kind of text.

Tokenizers disagree with the local estimate differently for Chinese and for everything else
(measured with Qwen2.5's: Chinese prompt text 0.58-0.66 of the estimate, English, code and diffs
0.75-0.83). One ratio learnt on a Chinese prompt with a small diff (~0.63) undercounts a Chinese
prompt that is mostly diff (~0.74) by a sixth: on an 8k window that is the answer's whole room.
So each answer's count (Chinese estimate c, the rest o, the server's s) is kept, and:

- once the recent prompts mix the two kinds in different proportions, the two ratios are fitted
  (least squares) and the larger bounds every prompt, whatever its mix;
- until then each count bounds the ratio of any mix, assuming only that Chinese costs between
  CJK_LOW and CJK_HIGH times what the rest does relative to the estimate (the tokenizers measured
  for bot/diffs/tokens.py fall within it).

Pure: no I/O; `LLM` owns one per endpoint.
"""

from __future__ import annotations

from collections import deque

from ..diffs.tokens import estimate_tokens_split

MEMORY = 16  # counts kept
LOW, HIGH = 0.5, 4.0  # a ratio outside these is a misreport, clamped
CJK_LOW, CJK_HIGH = 0.6, 1.25  # Chinese's ratio over the rest's, at the extremes
MIN_SPREAD = 0.15  # the share of Chinese must differ this much among counts to fit two ratios
MIN_TOKENS = 200  # smaller prompts are mostly chat-template overhead: no evidence


class TokensRatio:
    def __init__(self) -> None:
        self._counts: deque[tuple[float, float, float]] = deque(maxlen=MEMORY)
        self.bound = 1.0  # the endpoint's tokens per local token, at most, for any prompt

    @property
    def learnt(self) -> bool:
        return bool(self._counts)

    def observe_texts(self, texts: list[str], overhead: float, server_tokens: int) -> None:
        """One answered prompt: its texts (estimated here, split by kind), the per-message overhead
        the local count adds, and the tokens the endpoint counted."""
        cjk = rest = 0.0
        for text in texts:
            c, o = estimate_tokens_split(text)
            cjk, rest = cjk + c, rest + o
        rest += overhead
        if cjk + rest < MIN_TOKENS or server_tokens <= 0:
            return
        self.observe(cjk, rest, float(server_tokens))

    def observe(self, cjk: float, rest: float, server: float) -> None:
        ratio = min(HIGH, max(LOW, server / (cjk + rest)))
        self._counts.append((cjk, rest, ratio * (cjk + rest)))
        self.bound = self._bound()

    def remembered(self, bound: float) -> None:
        """A bound an earlier process learnt: a count of the rest alone at that ratio."""
        self.observe(0.0, 1000.0, 1000.0 * bound)

    def _bound(self) -> float:
        fitted = self._fit()
        if fitted is not None:
            return min(HIGH, max(LOW, *fitted))
        return min(HIGH, max(_worst_case(c, o, s) for c, o, s in self._counts))

    def _fit(self) -> tuple[float, float] | None:
        """(Chinese ratio, the rest's ratio) by least squares, when the counts tell them apart."""
        shares = [c / (c + o) for c, o, _ in self._counts]
        if max(shares) - min(shares) < MIN_SPREAD:
            return None
        scc = sum(c * c for c, _, _ in self._counts)
        soo = sum(o * o for _, o, _ in self._counts)
        sco = sum(c * o for c, o, _ in self._counts)
        scs = sum(c * s for c, _, s in self._counts)
        sos = sum(o * s for _, o, s in self._counts)
        det = scc * soo - sco * sco
        if det <= 1e-9 * scc * soo:
            return None
        rc = (scs * soo - sos * sco) / det
        ro = (sos * scc - scs * sco) / det
        if rc <= 0 or ro <= 0:
            return None
        # The fit is a mean; a prompt of either kind alone may sit above it: never below what a
        # count of (almost) one kind showed.
        for c, o, s in self._counts:
            if c / (c + o) < 0.05:
                ro = max(ro, s / (c + o))
            elif o / (c + o) < 0.05:
                rc = max(rc, s / (c + o))
        return rc, ro


def _worst_case(cjk: float, rest: float, server: float) -> float:
    """The highest ratio a prompt of any mix could have, given one count and CJK_LOW..CJK_HIGH."""
    share = cjk / (cjk + rest)
    ratio = server / (cjk + rest)
    if share < 0.05 or share > 0.95:  # one kind: its ratio (a prompt of the other kind corrects it)
        return ratio
    rest_ratio = ratio / (share * CJK_LOW + 1 - share)  # Chinese as cheap as it may be
    cjk_ratio = CJK_HIGH * ratio / (share * CJK_HIGH + 1 - share)  # Chinese as dear as it may be
    return max(rest_ratio, cjk_ratio)
