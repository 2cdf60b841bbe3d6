"""Greedy decoding under a JSON grammar, checking the grammar against one token instead of all of them.

llama-cpp-python samples a structured reply with the chain penalties → grammar → greedy: for every
token generated the grammar is matched against each of the vocabulary's 49,152 tokens, about 11 ms
a token for SmolLM2-135M here (bench/bench_local_cost.py), more than a tenth of the embedded model's
CPU on the bundled example. llama.cpp's own sampler (common/sampling.cpp) does it the other way
round: pick the token without the grammar, ask the grammar about that one token, and only when it
refuses it apply the grammar to the whole vocabulary and pick again.

At temperature 0 the reply is the same token for token: greedy takes the highest logit; when the
grammar allows that token it is also the highest allowed one, and when it does not, the second pick
is exactly the old chain's (penalties, grammar, greedy, in that order). Only greedy chains take this
path; any other setting keeps llama-cpp-python's chain.
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
    accepts and returns the token."""

    def __init__(self, llama, grammar, repeat_penalty, frequency_penalty, presence_penalty):
        from llama_cpp import _internals as internals

        self.penalties = internals.LlamaSampler()
        self.penalties.add_penalties(
            n_vocab=llama._n_vocab,
            penalty_last_n=llama.last_n_tokens_size,
            penalty_repeat=repeat_penalty,
            penalty_freq=frequency_penalty,
            penalty_present=presence_penalty,
        )
        self.grammar = internals.LlamaSampler()
        self.grammar.add_grammar(llama._model, grammar)
        self.greedy = internals.LlamaSampler()
        self.greedy.add_greedy()
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

    def _among_the_best(self, logits, n: int) -> int | None:
        """The grammar asked about the n highest tokens at once: the best one it allows, when no token
        outside them could match or beat it; else None."""
        import numpy as np
        from llama_cpp import llama_cpp as C

        part = np.argpartition(-logits, n)
        top, bound = part[:n], logits[part[n]]
        top = top[
            np.lexsort((top, -logits[top]))
        ]  # best first; equal logits by token id, as greedy breaks ties
        few = self.few
        few.candidates_data.id[:n] = top
        few.candidates_data.logit[:n] = logits[top]
        few.candidates_data.p[:n] = 0.0
        few.candidates.size, few.candidates.sorted, few.candidates.selected = n, False, -1
        C.llama_sampler_apply(self.grammar.sampler, ctypes.byref(few.candidates))
        allowed = np.flatnonzero(~np.isinf(few.candidates_data.logit[:n]))
        if allowed.size and few.candidates_data.logit[allowed[0]] > bound:
            return int(few.candidates_data.id[allowed[0]])
        return None

    def sample(self, ctx, idx: int = -1) -> int:
        from llama_cpp import llama_cpp as C

        logits = self._penalised(ctx, idx)
        COUNTS["tokens"] += 1
        token = None
        for n in TOP:
            token = self._among_the_best(logits, n)
            if token is not None:
                break
        if token is None:  # the whole vocabulary, as llama-cpp-python's chain does it
            COUNTS["refused"] += 1
            arr = ctypes.byref(self.cur.candidates)
            C.llama_sampler_apply(self.grammar.sampler, arr)
            C.llama_sampler_apply(self.greedy.sampler, arr)
            token = int(self.cur.candidates_data.id[self.cur.candidates.selected])
        C.llama_sampler_accept(self.penalties.sampler, token)
        C.llama_sampler_accept(self.grammar.sampler, token)
        return token

    def close(self) -> None:
        for s in (self.penalties, self.grammar, self.greedy):
            s.close()


def grammar_first_llama(Llama: Any) -> Any:
    """A subclass of llama_cpp.Llama whose greedy, grammar-constrained generations sample grammar-first."""

    class GrammarFirstLlama(Llama):
        def _init_sampler(self, *args, **kw):
            # the keywords Llama.generate passes; anything else is llama-cpp-python's own chain
            simple = (
                not args
                and kw.get("temp") == 0.0
                and kw.get("grammar") is not None
                and kw.get("logits_processor") is None
                and kw.get("mirostat_mode", 0) == 0
            )
            if not simple or getattr(self, "grammar_first", True) is False:
                return super()._init_sampler(*args, **kw)
            return GrammarFirst(
                self,
                kw["grammar"],
                kw.get("repeat_penalty", 1.0),
                kw.get("frequency_penalty", 0.0),
                kw.get("presence_penalty", 0.0),
            )

    return GrammarFirstLlama
