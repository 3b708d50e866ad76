"""A learned profile judging commits from its weights: numpy only, no scikit-learn.

model.py learns (scikit-learn, ~1 s to import and a fraction of a second to fit) and hands over
`weights()`; book.py keeps them in Redis; every process that reads a digest judges with this
module. The arithmetic is scikit-learn's own, step for step, so a commit gets the same numbers
from both (tests/test_taste.py holds them bitwise equal):

- a commit's words as a sparse row (commit_words, columns in vocabulary order, each word once);
- the levels' logistic regression: the row times the coefficients, summed column by column in
  ascending order as scipy's sparse product does, plus the intercept; two classes through the
  logistic function (scipy's `expit`, which is 1 / (1 + exp(−x)) with the C library's exp, as
  Python's math.exp), three through numpy's softmax as scikit-learn writes it;
- the headings' naive Bayes: the same sums over the log probabilities plus the log priors,
  normalised by scikit-learn's logsumexp;
- the most similar examples: Jaccard over their words, ranked by numpy's argsort as before.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence

import numpy

from ..core.models import Importance, Judgement
from .features import commit_words
from .model import SIMILAR


def _unpack(packed: list) -> numpy.ndarray:
    shape, data = packed
    return numpy.frombuffer(base64.b64decode(data), dtype=numpy.float64).reshape(shape)


class Judge:
    """What `LearnedProfile.weights()` says, ready to judge (built in a worker thread: a second of
    numpy work for the largest histories is not for the event loop)."""

    def __init__(self, weights: dict):
        self._column = {word: j for j, word in enumerate(weights["words"])}
        levels = weights["levels"]
        self._classes = list(levels["classes"])
        self._logistic = "coef" in levels
        if self._logistic:
            self._coef = _unpack(levels["coef"])
            self._intercept = _unpack(levels["intercept"])
        else:  # naive Bayes levels: bench/eval_judgement.py's comparison only
            self._level_log_prob = _unpack(levels["log_prob"])
            self._level_prior = _unpack(levels["prior"])
        headings = weights.get("headings")
        self._headings: list[str] = list(headings["classes"]) if headings else []
        if headings:
            self._heading_log_prob = _unpack(headings["log_prob"])
            self._heading_prior = _unpack(headings["prior"])
        self._only_heading = weights.get("only_heading") or ""
        self._examples = [tuple(e) for e in weights["examples"]]
        self._low = [e[0] == Importance.LOW.value for e in self._examples]
        docs = weights["docs"]
        self._sizes_array = numpy.array([len(d) for d in docs], dtype=float)
        # Which examples hold each word: the words two commits share, counted per example, as the
        # sparse product of the example matrix with the commit's row counted them.
        holders: dict[int, list[int]] = {}
        for i, doc in enumerate(docs):
            for j in doc:
                holders.setdefault(j, []).append(i)
        self._holders = {j: numpy.array(rows, dtype=numpy.intp) for j, rows in holders.items()}

    def judge(self, title: str, paths: Sequence[str], added: Sequence[str] = ()) -> Judgement:
        return self.judge_words(commit_words(title, paths, added))

    def judge_words(self, words: list[str]) -> Judgement:
        columns = sorted({j for w in words if (j := self._column.get(w)) is not None})
        probs = dict(zip(self._classes, self._level_probs(columns), strict=True))
        heading, share = self._only_heading, 1.0 if self._only_heading else 0.0
        if self._headings:
            p = self._heading_probs(columns)
            best = int(p.argmax())
            heading, share = str(self._headings[best]), float(p[best])
        return Judgement(
            above_low=1.0 - float(probs.get(Importance.LOW.value, 0.0)),
            high=float(probs.get(Importance.HIGH.value, 0.0)),
            heading=heading,
            heading_share=share,
            similar=self.similar(words, columns),
        )

    def _level_probs(self, columns: list[int]) -> list[float]:
        if not self._logistic:
            return [float(x) for x in _naive_bayes(columns, self._level_log_prob, self._level_prior)]
        scores = _row_times(columns, self._coef) + self._intercept
        if len(self._classes) <= 2:  # scikit-learn's binary case: expit of the one score
            p = 1.0 / (1.0 + math.exp(-float(scores[0])))
            return [1.0 - p, p]
        decision = scores.reshape(1, -1)  # scikit-learn's softmax, on the same (1, classes) array
        decision -= decision.max(axis=1).reshape((-1, 1))
        numpy.exp(decision, out=decision)
        decision /= decision.sum(axis=1).reshape((-1, 1))
        return [float(x) for x in decision[0]]

    def _heading_probs(self, columns: list[int]) -> numpy.ndarray:
        return _naive_bayes(columns, self._heading_log_prob, self._heading_prior)

    def similar(self, words: list[str], columns: list[int] | None = None, k: int = SIMILAR) -> tuple:
        """The k most similar labelled commits (as LearnedProfile.similar)."""
        mine = set(words)
        if not mine or not self._examples:
            return ()
        if columns is None:
            columns = sorted({j for w in words if (j := self._column.get(w)) is not None})
        inter = numpy.zeros(len(self._examples))
        for j in columns:
            inter[self._holders[j]] += 1.0
        jaccard = inter / (len(mine) + self._sizes_array - inter)
        ranked = jaccard.argsort()[::-1]
        chosen = [int(i) for i in ranked[:k]]
        for want_low in (True, False):  # one of each side, if the nearest k are all alike
            if chosen and all(self._low[i] != want_low for i in chosen):
                other = next((int(i) for i in ranked if self._low[int(i)] == want_low), None)
                if other is not None:
                    chosen[-1] = other
        return tuple((str(self._examples[i][0]), str(self._examples[i][1]), str(self._examples[i][2])) for i in chosen)


def _row_times(columns: list[int], matrix: numpy.ndarray) -> numpy.ndarray:
    """The binary row with ones at `columns` times matrix.T, summed in column order from zero —
    as scipy's sparse product (csr_matvecs) adds them."""
    total = numpy.zeros(matrix.shape[0])
    for j in columns:
        total += matrix[:, j]
    return total


def _naive_bayes(columns: list[int], log_prob: numpy.ndarray, prior: numpy.ndarray) -> numpy.ndarray:
    """MultinomialNB.predict_proba of one binary row: the joint log likelihood, less
    scikit-learn's logsumexp of it, exponentiated."""
    jll = (_row_times(columns, log_prob) + prior).reshape(1, -1)
    array_max = numpy.max(jll, axis=1, keepdims=True)
    index_max = jll == array_max
    rest = numpy.asarray(jll, copy=True)
    rest[index_max] = -numpy.inf
    m = numpy.sum(index_max.astype(rest.dtype), axis=1, keepdims=True, dtype=rest.dtype)
    shift = numpy.where(numpy.isfinite(array_max), array_max, 0)
    exp = numpy.exp(rest - shift)
    s = numpy.sum(exp, axis=1, keepdims=True, dtype=exp.dtype)
    s = numpy.where(s == 0, s, s / m)
    log_prob_x = numpy.squeeze(numpy.log1p(s) + numpy.log(m) + array_max, axis=1)
    return numpy.exp(jll - numpy.atleast_2d(log_prob_x).T)[0]
