"""Sampling under a JSON grammar that asks the grammar about the best tokens first, not all of them.

llama-cpp-python samples a structured reply with the chain penalties → grammar → the rest: for every
token generated the grammar is matched against each of the vocabulary's 49,152 tokens, about 11 ms
a token for SmolLM2-135M here (bench/bench_local_cost.py), more than a tenth of the embedded model's
CPU on the bundled example. llama.cpp's own sampler (common/sampling.cpp) does it the other way
round: pick the token without the grammar, ask the grammar about that one token, and only when it
refuses it apply the grammar to the whole vocabulary and pick again. abeq asks about the 64 best
tokens at once, then the 4,096 best, and only then the whole vocabulary (19 of 1,250 tokens on the
example).

The reply is the same token for token. At temperature 0 greedy takes the highest logit; when the
grammar allows that token it is also the highest allowed one, and when it does not, the second pick
is exactly the old chain's (penalties, grammar, greedy, in that order). Above 0 llama-cpp-python's
chain draws from the k best allowed tokens (top-k, then top-p, min-p, temperature and a seeded draw):
given the same k tokens in the same order the same draw picks the same token, so this path finds the
k best allowed tokens (when no unasked token could tie the last of them) and draws as the chain does.
A test on the real model holds both to llama-cpp-python's replies. Anything else (mirostat, logits
processors, top-k off) keeps llama-cpp-python's chain.
"""

from __future__ import annotations

import ctypes
from typing import Any

# how often the grammar refused the greedy token and the whole vocabulary was checked (the bench reads it)
COUNTS = {"tokens": 0, "refused": 0}
# how many of the best tokens the grammar is asked about before it is applied to the whole vocabulary
TOP = (64, 4096)


class GrammarFirst:
    """A stand-in for llama_cpp's LlamaSampler where Llama.sample uses it: `sample(ctx, idx)` picks,
    accepts and returns the token.

    llama-cpp-python's chain is penalties → grammar → the rest (greedy at temperature 0; else top-k,
    typical, top-p, min-p, temperature and a seeded draw). Everything after the grammar reads only
    the `need` highest tokens it allows (1 for greedy, k for top-k): when the best tokens asked about
    hold `need` allowed ones that no unasked token can match or tie, the rest runs on exactly those,
    best first; otherwise on the whole vocabulary, as llama-cpp-python runs it."""

    def __init__(self, llama, grammar, kw: dict):
        from llama_cpp import _internals as internals

        self.penalties = internals.LlamaSampler()
        self.penalties.add_penalties(
            n_vocab=llama._n_vocab,
            penalty_last_n=llama.last_n_tokens_size,
            penalty_repeat=kw.get("repeat_penalty", 1.0),
            penalty_freq=kw.get("frequency_penalty", 0.0),
            penalty_present=kw.get("presence_penalty", 0.0),
        )
        self.grammar = internals.LlamaSampler()
        self.grammar.add_grammar(llama._model, grammar)
        self.rest = internals.LlamaSampler()  # what llama-cpp-python's _init_sampler puts after the grammar
        if kw["temp"] == 0.0:
            self.rest.add_greedy()
            self.need = 1
        else:
            self.rest.add_top_k(kw["top_k"])
            self.rest.add_typical(kw.get("typical_p", 1.0), 1)
            self.rest.add_top_p(kw.get("top_p", 0.95), 1)
            self.rest.add_min_p(kw.get("min_p", 0.05), 1)
            self.rest.add_temp(kw["temp"])
            self.rest.add_dist(llama._seed)
            self.need = kw["top_k"]
        self.n_vocab = llama._n_vocab
        self.cur = internals.LlamaTokenDataArray(n_vocab=self.n_vocab)
        self.few = internals.LlamaTokenDataArray(n_vocab=TOP[-1])

    def _penalised(self, ctx, idx: int):
        """The candidates in token order, their logits after the repetition penalties."""
        import numpy as np
        from llama_cpp import llama_cpp as C

        logits = np.ctypeslib.as_array(C.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        self.cur.copy_logits(logits)
        self.cur.candidates.selected = -1
        C.llama_sampler_apply(self.penalties.sampler, ctypes.byref(self.cur.candidates))
        return self.cur.candidates_data.logit

    def _among_the_best(self, logits, n: int) -> bool:
        """The grammar asked about the n highest tokens at once. True, with `few` holding the `need`
        best allowed ones (best first, equal logits by token id as greedy breaks ties), when no other
        token could match or tie the last of them; else False."""
        import numpy as np
        from llama_cpp import llama_cpp as C

        part = np.argpartition(-logits, n)
        top, bound = part[:n], logits[part[n]]
        top = top[np.lexsort((top, -logits[top]))]
        few = self.few
        few.candidates_data.id[:n] = top
        few.candidates_data.logit[:n] = logits[top]
        few.candidates_data.p[:n] = 0.0
        few.candidates.size, few.candidates.sorted, few.candidates.selected = n, False, -1
        C.llama_sampler_apply(self.grammar.sampler, ctypes.byref(few.candidates))
        got = few.candidates_data.logit[:n]
        allowed = np.flatnonzero(~np.isinf(got))
        k = self.need
        if allowed.size < k or not got[allowed[k - 1]] > bound:
            return False
        if allowed.size > k and not got[allowed[k - 1]] > got[allowed[k]]:
            return False  # a tie at the cut: which one llama.cpp's top-k keeps is its own sort's
        keep = allowed[:k]
        few.candidates_data.id[:k] = few.candidates_data.id[keep]
        few.candidates_data.logit[:k] = got[keep]
        few.candidates.size = k
        return True

    def sample(self, ctx, idx: int = -1) -> int:
        from llama_cpp import llama_cpp as C

        logits = self._penalised(ctx, idx)
        COUNTS["tokens"] += 1
        if any(self._among_the_best(logits, n) for n in TOP if n > self.need):
            arr = self.few
        else:  # the whole vocabulary, as llama-cpp-python's chain does it
            COUNTS["refused"] += 1
            arr = self.cur
            C.llama_sampler_apply(self.grammar.sampler, ctypes.byref(arr.candidates))
        C.llama_sampler_apply(self.rest.sampler, ctypes.byref(arr.candidates))
        token = int(arr.candidates_data.id[arr.candidates.selected])
        for s in (self.penalties, self.grammar, self.rest):
            C.llama_sampler_accept(s.sampler, token)
        return token

    def close(self) -> None:
        for s in (self.penalties, self.grammar, self.rest):
            s.close()


def grammar_first_llama(Llama: Any) -> Any:
    """A subclass of llama_cpp.Llama whose grammar-constrained generations ask the grammar first about
    the best tokens."""

    class GrammarFirstLlama(Llama):
        def _init_sampler(self, *args, **kw):
            # the keywords Llama.generate passes; anything else is llama-cpp-python's own chain
            temp = kw.get("temp", 0.8)
            simple = (
                not args
                and kw.get("grammar") is not None
                and kw.get("logits_processor") is None
                and kw.get("mirostat_mode", 0) == 0
                and (temp == 0.0 or (temp > 0.0 and 0 < kw.get("top_k", 40) < TOP[-1]))
            )
            if not simple:
                return super()._init_sampler(*args, **kw)
            return GrammarFirst(self, kw["grammar"], {**kw, "temp": temp, "top_k": kw.get("top_k", 40)})

    return GrammarFirstLlama
