"""The real embedded model (SmolLM2-135M through llama.cpp), through the same path as any model."""

import pytest
from conftest import with_cases

from abeq.execution.engine import Engine, RunConfig
from abeq.models import ModelSpec, local
from abeq.results.reports.report import build_report
from abeq.schemas import Report

pytestmark = pytest.mark.slow


def test_local_path_to_a_gguf_file_loads_it(tmp_path):
    import asyncio

    from abeq.models import complete

    path = local.smollm2_path()
    spec = ModelSpec(name=f"local/{path}", max_tokens=8)
    out = asyncio.run(complete(spec, [{"role": "user", "content": "Say hi."}]))
    assert out.text and out.completion_tokens > 0 and out.cost == 0.0


def test_unknown_local_model_is_a_clear_error():
    import asyncio

    from abeq.errors import ModelCallError
    from abeq.models import complete

    with pytest.raises(ModelCallError, match="not a known embedded model"):
        asyncio.run(complete(ModelSpec(name="local/nope"), [{"role": "user", "content": "x"}]))


def test_embedded_model_with_three_judge_samples_and_aa_on_the_example(store, example):
    """The engine on the real model, through the same path as any model: the report validates, the
    case ends judged or errored (never silently equivalent), the model loads once and costs nothing;
    and issue 5's K=3 judge samples and A/A replay, counted and recorded. (The whole example on the
    embedded model, through the desk, is the main job's browser test.)"""
    from abeq.results.reports.record import run_record

    case = next(c for c in example["ts"].cases if c.type == "happy")
    one = with_cases(example, [case])
    spec = ModelSpec(name="local/smollm2", max_tokens=600)
    eng = Engine(
        store,
        example["original"],
        example["lossy"],
        one,
        RunConfig(runner=spec, judge=spec, allow_thin=True, concurrency=2, judge_samples=3, aa=True),
    )
    loads = local.LOAD_COUNT["n"]
    run_id = eng.run()
    rec = run_record(store, build_report(store, run_id))
    Report.model_validate(rec["report"])
    (row,) = rec["cases"]
    assert rec["run"]["judge_samples"] == 3 and rec["run"]["aa"] is True
    assert (row["status"] == "judged") == (row["verdict"] is not None)
    for c in rec["report"]["cases"]:
        assert c["verdict"] in ("equivalent", "candidate-regressed", "candidate-diverged")
        assert (c["behaviour_delta"] == "") == (c["verdict"] == "equivalent")
    assert local.LOAD_COUNT["n"] - loads <= 1  # seven calls, one load (none if an earlier test loaded it)
    costs = store.sql.all("select cost from calls where cached = 0 and ok = 1")
    assert costs and all(r["cost"] == 0.0 for r in costs)
    if row["status"] == "judged":
        # three real samples, a majority that follows the rule, and the replay judged as well
        assert len(row["judge_samples"]) == 3
        assert all(
            v in ("equivalent", "candidate-regressed", "candidate-diverged") for v in row["judge_samples"]
        )
        top = max(row["judge_samples"].count(v) for v in set(row["judge_samples"]))
        assert row["agreement"] == pytest.approx(top / 3, abs=1e-4)  # stored to 4 places
        assert row["uncertain"] == (len(set(row["judge_samples"])) > 1)
        assert row["judge_verdict"] in row["judge_samples"]
        if row["aa_verdict"]:
            assert rec["run"]["aa_false_regression_rate"] == float(row["aa_verdict"] == "candidate-regressed")
    else:  # an honest error, with its reason, and never a verdict
        assert row["error"] and row["verdict"] is None
    # teacher + candidate + teacher replay, 3 judge samples + 1 A/A judgement: each a real call
    made = store.sql.all("select count(*) as n from calls where cached = 0")[0]["n"]
    assert made >= (3 if row["status"] != "judged" else 7)


def test_calls_for_one_document_reuse_its_prefix_even_when_other_calls_come_between(example):
    """Teacher, judge, teacher on the llama thread: the second teacher call evaluates only its case,
    because the runner prompt + document keep a llama.cpp context of their own (the judge's prompt
    has another), over the one loaded model."""
    import asyncio

    from abeq.execution.runners.runner import runner_messages
    from abeq.models import complete
    from abeq.models.local_contexts import PERF

    spec = ModelSpec(name="local/smollm2", max_tokens=4)
    first, second = example["ts"].cases[:2]
    other = [{"role": "system", "content": "You compare two texts."}, {"role": "user", "content": "A or B?"}]

    async def three():
        a = await complete(spec, runner_messages(example["original"].text, first, "skill"))
        await complete(spec, other)
        b = await complete(spec, runner_messages(example["original"].text, second, "skill"))
        return a, b

    loads, evaluated = local.LOAD_COUNT["n"], PERF["prompt_tokens_evaluated"]
    a, b = asyncio.run(three())
    # the runner prompt and the document are most of a runner prompt; only the case is evaluated anew
    assert (
        b.cache_read_tokens > b.prompt_tokens / 2
        and b.prompt_tokens - b.cache_read_tokens < a.prompt_tokens / 2
    )
    assert PERF["prompt_tokens_evaluated"] - evaluated < 2 * a.prompt_tokens  # not three full prompts
    assert local.LOAD_COUNT["n"] <= max(1, loads) and b.cost == 0.0  # the weights were loaded once


def test_grammar_first_sampling_gives_llama_cpp_pythons_replies_token_for_token():
    """abeq asks the JSON grammar about the best tokens before the whole vocabulary
    (local_sampling.py). Its replies must be exactly those of llama-cpp-python's own chain (penalties,
    grammar over every token, then greedy, or top-k … and a seeded draw), on the judge's and the
    runner's real schemas, greedy and at temperature 0.7 with seeds (as judge samples run); it must
    actually take the shortcut; and what it does not cover keeps the library's chain."""
    from llama_cpp import Llama
    from llama_cpp import _internals as internals
    from llama_cpp.llama_grammar import LlamaGrammar

    from abeq.models.local_sampling import COUNTS, GrammarFirst, grammar_first_llama
    from abeq.models.local_weights import smollm2_weights
    from abeq.models.schema import response_format
    from abeq.schemas.core import JudgeReply, RunnerReply

    def load(cls):  # the weights abeq runs
        return local.load_llama(
            cls, smollm2_weights()[0], n_ctx=1024, n_threads=local.threads(), verbose=False, seed=0
        )

    asks = [
        (
            JudgeReply,
            0.0,
            None,
            "Teacher: listed the files, edited main.py, ran the tests. Candidate: edited main.py.",
        ),
        (
            RunnerReply,
            0.0,
            None,
            "Follow the skill: write the commit message for a change that renames a function.",
        ),
        (
            JudgeReply,
            0.7,
            11,
            "Teacher: wrote the tests first, then the code. Candidate: wrote the code only.",
        ),
        (
            JudgeReply,
            0.7,
            12,
            "Teacher: wrote the tests first, then the code. Candidate: wrote the code only.",
        ),
    ]

    def replies(llm):
        out = []
        for model_cls, temperature, seed, text in asks:
            schema = response_format(model_cls, portable=False)["json_schema"]["schema"]
            r = llm.create_chat_completion(
                messages=[{"role": "user", "content": text}],
                temperature=temperature,
                seed=seed,
                max_tokens=48,  # both chains stop at the same token; the comparison needs no more
                repeat_penalty=local.REPEAT_PENALTY,
                response_format={"type": "json_object", "schema": local.bounded_schema(schema)},
            )
            out.append(r["choices"][0]["message"]["content"])
        return out

    theirs = replies(load(Llama))
    fast = load(grammar_first_llama(Llama))
    before = dict(COUNTS)
    ours = replies(fast)
    assert ours == theirs
    assert ours[2] != ours[3]  # the seeds were honoured: two samples, two replies
    sampled, whole = COUNTS["tokens"] - before["tokens"], COUNTS["refused"] - before["refused"]
    assert sampled > 100 and whole < sampled / 2, (sampled, whole)
    grammar = LlamaGrammar.from_string('root ::= "a"', verbose=False)
    assert isinstance(fast._init_sampler(temp=0.0, grammar=grammar), GrammarFirst)
    assert isinstance(fast._init_sampler(temp=0.7, top_k=40, grammar=grammar), GrammarFirst)
    assert isinstance(fast._init_sampler(temp=0.7, top_k=0, grammar=grammar), internals.LlamaSampler)
    assert isinstance(fast._init_sampler(temp=0.7, mirostat_mode=2, grammar=grammar), internals.LlamaSampler)
    assert isinstance(fast._init_sampler(temp=0.0, grammar=None), internals.LlamaSampler)
