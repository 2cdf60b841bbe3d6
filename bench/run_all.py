"""Run every benchmark, each in its own process, and print a Markdown table of figures vs targets.

Each bench writes bench/results/<name>.json (bench_diff and bench_review print their figures;
they are collected from their output into diff.json and review.json here).

Run: .venv/bin/python bench/run_all.py [--only overhead,cache,...] [--readme]
  --readme  also replace the table in bench/README.md (between the bench:table markers)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
ORDER = (
    "startup",
    "gate",
    "gate_base_cases",
    "cache",
    "round_cost",
    "faults",
    "diff",
    "review",
    "review_browser",
    "local",
    "embedded_example",
    "mutate",
    "samples",
    "overhead",
)
SCRIPTS = {name: BENCH / f"bench_{name}.py" for name in ORDER}


def run(name: str) -> dict:
    (RESULTS / f"{name}.json").unlink(missing_ok=True)  # never report a stale figure as this run's
    t = time.perf_counter()
    p = subprocess.run([sys.executable, str(SCRIPTS[name])], capture_output=True, text=True, cwd=str(ROOT))
    wall = time.perf_counter() - t
    sys.stderr.write(p.stdout + (p.stderr if p.returncode else ""))
    if name == "diff":
        data = json.loads(p.stdout.strip().splitlines()[-1])
        _save("diff", data)
    elif name == "review":
        m = re.search(r"median (\d+) ms, max (\d+) ms over (\d+) renders", p.stdout)
        data = {
            "bench": "review",
            "cases": 1000,
            "load_1min": round(os.getloadavg()[0], 2),
            "median_ms": int(m.group(1)) if m else None,
            "max_ms": int(m.group(2)) if m else None,
            "renders": int(m.group(3)) if m else None,
            "target_ms": 1000,
            "target_met": p.returncode == 0 and m is not None,
        }
        _save("review", data)
    path = RESULTS / f"{name}.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data["_exit_code"], data["_wall_s"] = p.returncode, round(wall, 1)
    return data


def _save(name: str, data: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")


def _mark(ok) -> str:
    return "—" if ok is None else ("met" if ok else "**missed**")


def rows(r: dict) -> list[tuple[str, str, str, str]]:
    out = []
    ov = r.get("overhead")
    if ov:
        by = {(x["transport"], x["latency_s"]): x for x in ov["results"]}
        for (tr, lat), x in sorted(
            by.items(), key=lambda kv: (kv[0][1], ("fast", "litellm", "bare").index(kv[0][0]))
        ):
            limit = ov.get("target_ratio_at_250ms", 1.05)
            target = f"≤ {limit:g}" if (tr, lat) == ("fast", 0.25) else "—"
            ok = x["ratio"] <= limit if target != "—" else None
            label = {
                "fast": "abeq, fast path",
                "litellm": "abeq, ABEQ_TRANSPORT=litellm",
                "bare": "bare aiohttp client",
            }[tr]
            out.append(
                (
                    f"Overhead @ {lat * 1000:g} ms, {label}: measured / bound "
                    f"({x['measured_s']:.2f} s / {x['bound_s']:.2f} s, {x['calls']} calls, concurrency "
                    f"{x['concurrency']})",
                    f"{x['ratio']:.3f}",
                    target,
                    _mark(ok),
                )
            )
        for (tr, lat), x in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            if lat == 0.25:
                limit = ov.get("target_cpu_ms_per_call", 1.5)
                out.append(
                    (
                        f"Orchestrator CPU per model call, {tr} (server's own: {x['server_cpu_ms_per_call']} "
                        "ms)",
                        f"{x['cpu_ms_per_call']:.2f} ms",
                        f"≤ {limit:g} ms" if tr == "fast" else "—",
                        _mark(x["cpu_ms_per_call"] <= limit) if tr == "fast" else "—",
                    )
                )
    c = r.get("cache")
    if c:
        s = c["steps"]
        out.append(
            (
                "Cache: round 2 teacher calls (HTTP requests: candidate + judge only)",
                f"{s['round_2']['teacher_calls']} ({s['round_2']['http_requests']} requests for {c['cases']} "
                "cases)",
                "0",
                _mark(c["checks"]["round_2_zero_teacher_calls"]),
            )
        )
        out.append(
            (
                "Cache: identical re-run, model calls (HTTP requests)",
                str(s["rerun_round_2"]["http_requests"]),
                "0",
                _mark(c["checks"]["rerun_zero_model_calls"]),
            )
        )
    rc = r.get("round_cost")
    if rc:
        for label, x in rc["rounds"].items():
            target, ok = "—", None
            if label == "one added case":
                target, ok = "1 teacher call", rc["checks"]["one_added_case_one_teacher_call"]
            elif label == "failing round, --fail-fast":
                target, ok = (
                    "≤ 16 candidate calls; exit 1",
                    (
                        rc["checks"]["fail_fast_at_most_16_candidate_calls"]
                        and rc["checks"]["fail_fast_exit_1"]
                    ),
                )
            out.append(
                (
                    f"Round cost, {label} ({x['cases']} cases): calls (teacher/candidate/judge); prompt "
                    "tokens (from the provider's cache); completion tokens; cost (without the cache)",
                    f"{x['calls']} ({x['teacher_calls']}/{x['candidate_calls']}/{x['judge_calls']}); "
                    f"{x['prompt_tokens']:,} ({x['cached_prompt_tokens']:,}); {x['completion_tokens']:,}; "
                    f"${x['cost_usd']:.4f} (${x['cost_without_prompt_cache_usd']:.4f})",
                    target,
                    _mark(ok),
                )
            )
    f = r.get("faults")
    if f:
        x = f["faulty"]
        out.append(
            (
                f"Faults: {f['cases']} cases, {f['fail_rate']:.0%} HTTP 429/500 + {f['malformed_rate']:.0%} "
                "malformed "
                f"replies, default retries: cases judged + errored; verdicts changed by faults",
                f"{x['judged']} + {x['errored']}; {len(f['verdicts_changed_by_faults'])} changed "
                f"({x['requests']} requests vs {f['clean']['requests']} clean; {x['wall_s']} s vs "
                f"{f['clean']['wall_s']} s)",
                "all accounted for; 0 changed",
                _mark(f["target_met"]),
            )
        )
    v = r.get("review")
    if v:
        out.append(
            (
                "Review page server time, 1,000 cases (max of renders; median)",
                f"{v['max_ms']} ms ({v['median_ms']} ms)",
                "≤ 1000 ms",
                _mark(v["target_met"]),
            )
        )
    b = r.get("review_browser")
    if b:
        out.append(
            (
                f"Review page in Chromium, {b['cases']} cases: first case (median of loads); Next "
                f"(median; max) (1-minute load {b['load_1min']})",
                f"{b['first_case_median_s']} s; {b['next_median_s']} s ({b['next_max_s']} s)",
                f"≤ {b['target_first_s']} s; ≤ {b['target_next_s']} s",
                _mark(b["target_met"]),
            )
        )
    d = r.get("diff")
    if d:
        x = d["results"][0]
        out.append(
            (
                f"Word diff of two {x['a_bytes'] / 1000:.0f} KB transcripts, {x['case']} edits (best; "
                "median)",
                f"{x['word_diff_best_ms']} ms ({x['word_diff_median_ms']} ms)",
                "≤ 50 ms",
                _mark(d["target_met"]),
            )
        )
    mu = r.get("mutate")
    if mu:
        full = mu["rows"]["full run"]
        for label, x in mu["rows"].items():
            target, ok = "—", None
            if label == "mutate after a run":
                target, ok = "0 teacher calls", mu["checks"]["after_a_run_no_teacher_call"]
            elif label == "mutate again":
                target, ok = "0 model calls", mu["checks"]["repeat_no_model_call"]
            elif label == "mutate --all-cases, fresh database":
                target = "estimate within 25%"
                ok = mu["checks"].get("all_cases_estimate_within_25pct")
            est = (
                f"; estimated before it started: {x['estimated_max_tokens']:,} at most, "
                f"{x['estimated_expected_tokens']:,} expected"
                if "estimated_max_tokens" in x and x["calls"]
                else ""
            )
            width = 8 if "concurrency 8" in label else 1
            out.append(
                (
                    f"Mutation test of the bundled example ({mu['cases']} cases, {mu['model']}, concurrency "
                    f"{width}), {label.replace(', concurrency 8', '')}: calls (teacher); tokens; × a full "
                    "run's tokens",
                    f"{x['calls']} ({x['teacher_calls']}); {x['tokens']:,}; "
                    f"{x['tokens'] / max(1, full['tokens']):.2f}{est}",
                    target,
                    _mark(ok),
                )
            )
    sa = r.get("samples")
    if sa and "samples_needed" in sa:
        need, eng = sa["samples_needed"]["n_for_95pct"], sa["engine"]
        n = next(k for k in eng if k != "n=1")
        out.append(
            (
                "Runner samples: N at which a rule kept 50% of the time is called lost with 95% probability "
                "(m = 1, 2, 10, 20 behaviours a case)",
                ", ".join(
                    str(need[k]) for k in ("power_q05", "power_q05_m2", "power_q05_m10", "power_q05_m20")
                ),
                "—",
                "—",
            )
        )
        out.append(
            (
                f"Runner samples, bundled example at {n}: calls round 1 / round 2 (teacher runs in round 2)",
                f"{eng[n]['round_1']['made']} / {eng[n]['round_2']['made']} "
                f"({eng[n]['round_2']['by_kind'].get('runner-teacher', 0)})",
                "0 teacher runs in round 2",
                _mark(eng[n]["round_2"]["by_kind"].get("runner-teacher", 0) == 0),
            )
        )
    lo = r.get("local")
    if lo:
        for name, x in lo["results"].items():
            out.append(
                (
                    f"Embedded model tokens/s, abeq / bare llama-cpp-python, {name} "
                    f"({x['abeq_tokens_per_s']} / {x['bare_tokens_per_s']} tok/s)",
                    f"{x['ratio']:.3f}",
                    "≥ 0.9",
                    _mark(x["ratio"] >= 0.9),
                )
            )
        out.append(
            (
                "Embedded model loads per process (after several calls); load time",
                f"{lo['load_count']} ({lo['load_seconds']:.2f} s)",
                "1",
                _mark(lo["load_count"] == 1),
            )
        )
    ee = r.get("embedded_example")
    if ee:
        one, per = ee["single_context"], ee["per_prefix"]
        out.append(
            (
                f"Embedded model, the bundled example ({ee['cases']} cases, concurrency "
                f"{ee['concurrency']}): wall time and prompt evaluation, a llama.cpp context per prompt "
                "prefix / one context "
                f"(prompt tokens evaluated: {per['prompt_tokens_evaluated']:,.0f} / "
                f"{one['prompt_tokens_evaluated']:,.0f} of {ee['prompt_tokens']:,.0f}; the same "
                f"{per['generated_tokens']:,.0f} tokens generated in both)",
                f"{per['wall_s']:.0f} s / {one['wall_s']:.0f} s ({ee['wall_ratio']:.2f}); prompt eval "
                f"{per['prompt_eval_s']:.0f} s / {one['prompt_eval_s']:.0f} s "
                f"({ee['prompt_eval_ratio']:.2f}); generation {per['generation_s']:.0f} s / "
                f"{one['generation_s']:.0f} s",
                "—",
                "—",
            )
        )
    g = r.get("gate")
    if g:
        out.append(
            (
                f"`abeq gate`, no relevant change, {g['commits']:,} commits: wall; CPU; modules loaded "
                f"(median of 5; load {g['load_1min']})",
                f"{g['median_s']:.3f} s; {g.get('median_cpu_s', 0):.3f} s; {g.get('modules', '?')}",
                f"≤ {g['target_s']:g} s wall (quiet machine)",
                _mark(g["target_met"]),
            )
        )
    gb = r.get("gate_base_cases")
    if gb:
        for key, label in (
            ("unchanged", "set unchanged"),
            ("edited", "set edited in the PR: 2 cases edited, 1 removed, 1 added"),
        ):
            g, h = gb[key]["gate"], gb[key]["head_set_only"]
            out.append(
                (
                    f"`abeq gate`, the base's cases beside the head's, {label}: calls made, gate / the "
                    f"head's set alone (fresh store; {g['cases']} / {h['cases']} cases)",
                    f"{g['made']} / {h['made']}",
                    "—",
                    "—",
                )
            )
        w = gb["edited"]
        out.append(
            (
                "`abeq gate`, set edited, in a store that gated another PR on the same base: calls made, "
                "gate / the head's set alone",
                f"{w['gate_warm_store']['made']} / {w['head_set_only_warm_store']['made']}",
                "—",
                "—",
            )
        )
    st = r.get("startup")
    if st:
        for key, target in (
            ("version", f"≤ {st['target_cpu_s']:g} s CPU"),
            ("help", f"≤ {st['target_s']:g} s wall"),
        ):
            m = st[key]
            out.append(
                (
                    f"`{m['command']}`: wall; CPU; modules loaded (median of 5; load {st['load_1min']})",
                    f"{m['median_wall_s']:.3f} s; {m['median_cpu_s']:.3f} s; {m['modules']}",
                    target,
                    _mark(
                        m["median_cpu_s"] <= st["target_cpu_s"]
                        if key == "version"
                        else m["median_wall_s"] <= st["target_s"]
                    ),
                )
            )
    return out


def table(r: dict, load: tuple) -> str:
    lines = ["| Figure | Measured | Target | |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows(r)]
    lines.append("")
    lines.append(
        f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores (shared); "
        f"1-minute load average {load[0]:.2f} before, {load[1]:.2f} after."
    )
    return "\n".join(lines)


def round_cost_table(rc: dict) -> str:
    """bench_round_cost.py's rounds as their own table (bench/README.md, "Round cost")."""
    lines = [
        "| round | calls (teacher / candidate / judge) | prompt tokens | of them from the provider's cache "
        "| completion tokens | cost | cost without the prompt cache |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, x in rc["rounds"].items():
        lines.append(
            f"| {label} ({x['cases']} cases) | {x['calls']} ({x['teacher_calls']} / {x['candidate_calls']} / "
            f"{x['judge_calls']}) | {x['prompt_tokens']:,} | {x['cached_prompt_tokens']:,} | "
            f"{x['completion_tokens']:,} | ${x['cost_usd']:.4f} | ${x['cost_without_prompt_cache_usd']:.4f} |"
        )
    return "\n".join(lines)


def update_readme(md: str, marker: str = "table") -> None:
    path = BENCH / "README.md"
    text = path.read_text(encoding="utf-8")
    begin, end = f"<!-- bench:{marker}:begin -->", f"<!-- bench:{marker}:end -->"
    if begin not in text or end not in text:
        raise SystemExit(f"{path}: no {begin} ... {end} markers")
    head, rest = text.split(begin, 1)
    path.write_text(head + begin + "\n" + md + "\n" + end + rest.split(end, 1)[1], encoding="utf-8")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="run every benchmark and print figures vs targets")
    p.add_argument("--only", default=",".join(ORDER), help="comma-separated subset of: " + ", ".join(ORDER))
    p.add_argument("--readme", action="store_true", help="replace the table in bench/README.md")
    a = p.parse_args(argv)
    names = [n for n in ORDER if n in a.only.split(",")]
    load_before = os.getloadavg()[0]
    results, failed = {}, []
    for name in names:
        sys.stderr.write(f"== bench_{name}.py\n")
        sys.stderr.flush()
        try:
            results[name] = run(name)
        except Exception as e:  # one broken bench must not hide the others' figures
            failed.append(name)
            sys.stderr.write(f"bench_{name}.py failed: {e}\n")
    md = table(results, (load_before, os.getloadavg()[0]))
    print(md)
    _save(
        "summary",
        {
            "load_1min_before": load_before,
            "load_1min_after": os.getloadavg()[0],
            "rows": [dict(zip(("figure", "measured", "target", "status"), x)) for x in rows(results)],
            "failed": failed,
        },
    )
    if a.readme:
        update_readme(md)
        if "round_cost" in results:
            update_readme(round_cost_table(results["round_cost"]), "round-cost")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
