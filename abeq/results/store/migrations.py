"""The database's schema: append-only migrations, applied every time the database is opened.

Never edit a step that has shipped; add the next one.
"""

from __future__ import annotations

from sqlite_utils import Database, Migrations

migrations = Migrations("abeq")


@migrations()
def m001_initial(db: Database) -> None:
    db.table("documents").create({"hash": str, "name": str, "content": str, "created_at": str}, pk="hash")
    db.table("transfer_sets").create(
        {
            "hash": str,
            "document_hash": str,
            "content": str,
            "confirmed": int,
            "confirmed_at": str,
            "created_at": str,
        },
        pk="hash",
    )
    db.table("reviews").create(
        {
            "id": int,
            "name": str,
            "original_hash": str,
            "transfer_set_hash": str,
            "variant": str,
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("original_hash", "documents", "hash")],
    )
    db.table("reviews").create_index(["name"], unique=True)
    # Cached successful runner calls. Errors never land here.
    db.table("runner_results").create(
        {
            "key": str,
            "doc_hash": str,
            "case_id": str,
            "model": str,
            "variant": str,
            "prompt": str,
            "sample": int,
            "transcript": str,
            "self_report": str,
            "gate_truncated": int,
            "gate_section": str,
            "prompt_tokens": int,
            "completion_tokens": int,
            "cost": float,
            "latency": float,
            "attempts": int,
            "created_at": str,
        },
        pk="key",
    )
    db.table("judgements").create(
        {
            "key": str,
            "model": str,
            "prompt": str,
            "sample": int,
            "verdict": str,
            "behaviour_delta": str,
            "original_directness": int,
            "candidate_directness": int,
            "interpretation_notes": str,
            "raw": str,
            "prompt_tokens": int,
            "completion_tokens": int,
            "cost": float,
            "latency": float,
            "attempts": int,
            "created_at": str,
        },
        pk="key",
    )
    db.table("runs").create(
        {
            "id": int,
            "review_id": int,
            "round": int,
            "config_key": str,
            "original_hash": str,
            "candidate_hash": str,
            "transfer_set_hash": str,
            "runner_model": str,
            "judge_model": str,
            "variant": str,
            "config": str,
            "status": str,
            "thin_accepted": int,
            "started_at": str,
            "finished_at": str,
            "summary": str,
            "stats": str,
        },
        pk="id",
        foreign_keys=[
            ("original_hash", "documents", "hash"),
            ("candidate_hash", "documents", "hash"),
            ("transfer_set_hash", "transfer_sets", "hash"),
        ],
    )
    db.table("runs").create_index(["config_key"])
    db.table("run_cases").create(
        {
            "run_id": int,
            "case_id": str,
            "position": int,
            "status": str,
            "teacher_key": str,
            "candidate_key": str,
            "judge_keys": str,
            "verdict": str,
            "agreement": float,
            "uncertain": int,
            "gate_truncated": int,
            "aa_verdict": str,
            "error_stage": str,
            "error": str,
            "cached": str,
            "updated_at": str,
        },
        pk=("run_id", "case_id"),
        foreign_keys=[("run_id", "runs", "id")],
    )
    db.table("overrides").create(
        {
            "id": int,
            "run_id": int,
            "case_id": str,
            "verdict": str,
            "judge_verdict": str,
            "reason": str,
            "reviewer": str,
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id")],
    )
    db.table("overrides").create_index(["run_id", "case_id"])
    db.table("calls").create(
        {
            "id": int,
            "run_id": int,
            "case_id": str,
            "kind": str,
            "model": str,
            "key": str,
            "cached": int,
            "ok": int,
            "prompt_tokens": int,
            "completion_tokens": int,
            "cost": float,
            "latency": float,
            "attempts": int,
            "error": str,
            "created_at": str,
        },
        pk="id",
    )
    db.table("calls").create_index(["run_id"])


@migrations()
def m002_review_candidate(db: Database) -> None:
    # the candidate loaded into a review before it has runs (each review its own: never another's)
    db.table("reviews").add_column("candidate_hash", str)


@migrations()
def m003_run_owner(db: Database) -> None:
    # Who runs a run and whether it is still alive: a row left 'running' by a process that died
    # reads as interrupted. A cancel can be asked from another process (the desk, for a CLI run).
    # The attempt columns make progress count the calls of the current attempt of a resumed run.
    for col, kind in (
        ("owner", str),  # "host:pid" of the process running it
        ("heartbeat_at", str),  # refreshed every few seconds while it runs
        ("cancel_requested_at", str),
        ("attempt_started_at", str),
        ("attempt_first_call", int),  # calls.id after which this attempt's calls lie
    ):
        db.table("runs").add_column(col, kind)


@migrations()
def m004_checks(db: Database) -> None:
    # Cached grading calls (natural-language checks, both arms in one call). Errors never land here.
    db.table("gradings").create(
        {
            "key": str,
            "model": str,
            "prompt": str,
            "shown_as_a": str,  # which arm the grader saw as run A (the blind order)
            "reply": str,  # JSON: the validated reply, still in A/B terms
            "raw": str,
            "prompt_tokens": int,
            "completion_tokens": int,
            "cost": float,
            "latency": float,
            "attempts": int,
            "created_at": str,
        },
        pk="key",
    )
    # Every check of every judged case of a run, with its result on both arms.
    db.table("check_results").create(
        {
            "run_id": int,
            "case_id": str,
            "idx": int,
            "label": str,
            "type": str,
            "target": str,
            "source": str,
            "kind": str,
            "description": str,
            "metric": str,
            "gates": int,
            "teacher": int,
            "candidate": int,
            "teacher_evidence": str,
            "candidate_evidence": str,
            "reason": str,
            "shown_as_a": str,
            "grading_key": str,
        },
        pk=("run_id", "case_id", "idx"),
        foreign_keys=[("run_id", "runs", "id")],
    )
    # how many checks the teacher passed and the candidate failed (each makes the case regressed)
    db.table("run_cases").add_column("checks_lost", int)


@migrations()
def m005_workspaces(db: Database) -> None:
    # a case's workspace folder as read when its set was loaded, content-addressed like documents;
    # a set row names the one each case uses (JSON: case id -> digest)
    db.table("workspaces").create({"digest": str, "files": str, "created_at": str}, pk="digest")
    db.table("transfer_sets").add_column("workspaces", str)
    # how a runner result was produced (chat, tools, command) and what it observed besides its
    # transcript (JSON: workspace changes, tool trace, self-report fields not reported)
    db.table("runner_results").add_column("mode", str)
    db.table("runner_results").add_column("observed", str)


@migrations()
def m006_review_actions(db: Database) -> None:
    # A reviewer either overrides the judge or agrees with it ("agree": verdict = the judge's), and
    # each action records what it replaced: the action in effect when it was saved (none: null) and
    # the verdict the reviewer had in front of them, so two reviewers never overwrite each other unseen.
    db.table("overrides").add_column("action", str, not_null_default="override")
    db.table("overrides").add_column("seen_id", int)
    db.table("overrides").add_column("seen_verdict", str)


@migrations()
def m007_provider_cache_and_fail_fast(db: Database) -> None:
    # prompt-cache tokens a provider reported (part of prompt_tokens), and what the cache saved
    for table in ("calls", "runner_results", "judgements"):
        db.table(table).add_column("cache_read_tokens", int)
        db.table(table).add_column("cache_write_tokens", int)
    db.table("calls").add_column("cache_saved", float)
    # the case whose regression stopped a --fail-fast run (its other cases were not run)
    db.table("runs").add_column("stopped_after", str)


@migrations()
def m008_calibrations(db: Database) -> None:
    # a judge model measured on a labelled calibration suite (abeq.calibration), per judge prompt
    # version: the headline figures as columns, everything else (per category, confusion) as JSON
    db.table("calibrations").create(
        {
            "id": int,
            "judge_model": str,
            "prompt": str,
            "suite": str,
            "suite_hash": str,
            "samples": int,
            "pairs": int,
            "accuracy": float,
            "regressions": int,
            "regressions_caught": int,
            "regression_recall": float,
            "false_regression_rate": float,
            "summary": str,
            "created_at": str,
        },
        pk="id",
    )
    db.table("calibrations").create_index(["judge_model", "prompt"])


@migrations()
def m009_mutations(db: Database) -> None:
    # `abeq mutate`: one row per mutation test of a set on an original (its mutants' runs are rows of
    # `runs`, named in `run_ids`); `report` holds the finished report, so a repeat reads it back
    db.table("mutations").create(
        {
            "id": int,
            "key": str,
            "original_hash": str,
            "transfer_set_hash": str,
            "runner_model": str,
            "judge_model": str,
            "status": str,
            "mutants": int,
            "killed": int,
            "score": float,
            "run_ids": str,
            "report": str,
            "started_at": str,
            "finished_at": str,
        },
        pk="id",
    )
    db.table("mutations").create_index(["transfer_set_hash"])


@migrations()
def m010_document_files(db: Database) -> None:
    # a skill is a folder: its other files (references/, scripts/…) are stored as a workspace tree
    # (content-addressed, in `workspaces`) named by digest here; NULL for a single-file document
    db.table("documents").add_column("files", str)


@migrations()
def m011_confirmation_provenance(db: Database) -> None:
    # who confirmed a set and in which review: a set confirmed in one review counts in another (same
    # cases, same original), and that review must say whose confirmation it is
    db.table("transfer_sets").add_column("confirmed_by", str)
    db.table("transfer_sets").add_column("confirmed_in", str)


@migrations()
def m012_written_mutants(db: Database) -> None:
    # `abeq mutate --model-mutants N`: a model's reply of written mutants (validated JSON), under the
    # key of the document, the count, the prompt and the model's sampling; errors never land here
    db.table("written_mutants").create(
        {
            "key": str,
            "model": str,
            "prompt": str,
            "reply": str,
            "prompt_tokens": int,
            "completion_tokens": int,
            "cost": float,
            "latency": float,
            "attempts": int,
            "created_at": str,
        },
        pk="key",
    )


@migrations()
def m013_runner_samples(db: Database) -> None:
    # `--runner-samples N`: a case's samples (each arm's keys, the judge's verdict per pair, the
    # behaviours' rates and the test's decision) as JSON; NULL for a case run once
    db.table("run_cases").add_column("samples", str)


@migrations()
def m014_claims(db: Database) -> None:
    # A runner call being made now, by which run (several runs, processes or machines share a store):
    # a run that needs the same result waits for it instead of paying for it again. A claim counts
    # while its run is alive (liveness.py: its process, its heartbeat); a dead holder's is taken over.
    db.table("claims").create({"key": str, "run_id": int, "owner": str, "claimed_at": str}, pk="key")


@migrations()
def m015_assignments(db: Database) -> None:
    # Work shared out: which reviewer a case of a run is assigned to (one per case; assigning it again
    # replaces), who assigned it and when. A reviewer's own cases come first in their review queue.
    db.table("assignments").create(
        {"run_id": int, "case_id": str, "reviewer": str, "assigned_by": str, "assigned_at": str},
        pk=("run_id", "case_id"),
        foreign_keys=[("run_id", "runs", "id")],
    )
    db.table("assignments").create_index(["run_id", "reviewer"])


@migrations()
def m016_document_loads(db: Database) -> None:
    # Where a document was loaded from: `documents` keeps one name per content (the first loader's),
    # so the same text loaded later as skill/SKILL.md read as an older file's name. Each load is a row:
    # its name, its source (an absolute path, git:REV:PATH, "uploaded", "pasted"), in which review, as
    # which document; the desk shows the latest load of what it shows.
    db.table("document_loads").create(
        {
            "id": int,
            "hash": str,
            "name": str,
            "source": str,
            "review": str,
            "role": str,
            "loaded_at": str,
        },
        pk="id",
    )
    db.table("document_loads").create_index(["hash"])


@migrations()
def m017_run_confirmation(db: Database) -> None:
    # `abeq run --confirm` accepts the set for that run only: whose acceptance it was is the run's,
    # and the set is kept unconfirmed (a later run, or the desk, must not count it as confirmed)
    db.table("runs").add_column("set_confirmed_for_run", str)
