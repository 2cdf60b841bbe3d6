"""The Transfer set page's "Would this set notice a loss?" (AppTest): refused before the set is
confirmed, started from the page with the Run page's models, then the original drawn section by
section in the colour of its state, and a section's evidence opened; mutants a model wrote listed
apart, each with the behaviour it removed."""

from abeq.desk import mutation_vm as vm


def test_the_page_starts_a_mutation_test_and_opens_a_sections_evidence(app, db):
    app.switch_page("desk_pages/2_transfer_set.py").run()
    said = " ".join(i.value for i in app.info)
    assert "not confirmed" in said and not [b for b in app.button if b.key == "mutate_start"]
    app.button(key="confirm").click().run()
    app.session_state["keep:runner_model"] = app.session_state["keep:judge_model"] = "scripted/rules"
    app.session_state["keep:concurrency"] = 1
    app.run()
    assert "at most" in " ".join(c.value for c in app.caption)  # the estimate before it starts
    app.button(key="mutate_start").click().run()
    for job in list(vm._jobs):
        vm.wait(job, 120)
    app.run()
    text = " ".join(m.value for m in app.markdown)
    assert "Mutation score 86%: 6 of 7 section deletions noticed" in text  # (escaped where it adds structure)
    assert "not a trust figure" in text  # the scripted double made the calls: the page says so
    assert any("Not a trust figure" in w.value and "scripted/rules" in w.value for w in app.warning)
    drawn = [h.proto.body for h in app.get("html")]
    assert sum('data-state="killed by' in h for h in drawn) == 6
    assert sum('data-state="survived: claimed but unnoticed"' in h for h in drawn) == 1
    assert any("#fff8c5" in h and "Preamble" in h for h in drawn)  # amber: claimed but unnoticed
    app.button(key="mutant_ev_1").click().run()  # block 0 is the front matter; 1 the Preamble
    text = " ".join(m.value for m in app.markdown)
    assert any(m.value.startswith("#### Evidence: Preamble · survived") for m in app.markdown)
    # the two transcripts are the same: said once, shown once
    assert (
        "**happy-1** (judged equivalent): the original and the mutant produced the identical transcript"
        in text
    )
    assert not any("Without Preamble" in h.proto.body for h in app.get("html"))
    # a test with mutants a model wrote (abeq mutate --model-mutants): listed under the map apart
    # from the sections, each with the behaviour it removed, its state and its evidence
    from abeq.desk.run_vm import stored_document
    from abeq.mutation.run import prepare_mutation
    from abeq.results.store.store import Store

    store = Store(db)
    row = next(store.sql.db.query("select * from mutations order by id desc limit 1"))
    original = store.inputs.document(row["original_hash"])
    ts = store.inputs.transfer_set(row["transfer_set_hash"])
    prep = prepare_mutation(stored_document(store, original), ts, runner_model="scripted/rules", store=store,
                            concurrency=1, allow_thin=ts.thin_accepted, model_mutants=1)  # fmt: skip
    prep.run()
    app.run()
    text = " ".join(m.value for m in app.markdown)
    assert "8 mutants (7 section deletions, 1 written by a model) noticed" in text, text
    written = [h.proto.body for h in app.get("html") if "no longer" in h.proto.body]
    assert len(written) == 1 and 'data-state="killed by' in written[0]
    app.button(key="mutant_ev_model_7").click().run()
    assert any(m.value.startswith("#### Evidence:") and "no longer" in m.value for m in app.markdown)
    store.close()
