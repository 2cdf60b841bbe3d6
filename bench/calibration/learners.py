"""Cheap learners that read no behaviour: the floor a judge must clear on the calibration suite.

Each member reads only the surface of a pair (which lines of the original are missing verbatim,
lengths, the self-reports' wording, the characters of the line diff) and is fitted with
cross-validation grouped by scenario: every pair is predicted by a fit that never saw a pair of
its scenario, so a member scores what it would on runs of a document it has not met. author.py
drops the pairs this family gets right too easily and stores its figures with the suite;
`--check` (run by tests/test_calibration.py) refits it and fails when any member beats the stored
figure. The line-diff rule itself lives in abeq.models.baseline (no scikit-learn).

    python bench/calibration/learners.py --check   # refit on the built-in suite, compare (seconds)

    from learners import family_figures
    figures = family_figures(suite.pairs)     # one LearnerFigure per member, out of fold

Needs scikit-learn (the test extra); abeq itself reads the stored figures and never imports it.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from abeq.calibration.metrics import balanced_interval  # noqa: E402
from abeq.calibration.suite import LearnerFigure, Pair  # noqa: E402
from abeq.models.baseline import action_lines, line_diff  # noqa: E402
from abeq.vocab import REGRESSED  # noqa: E402

_TOOL = re.compile(r"^(\[\d+\] \w+ \{|● (Bash|Write|Update|Read|List)\()")
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]{2,}")


def _followed(report: dict | object) -> list[set[str]]:
    raw = getattr(report, "steps_followed_skipped", "") or ""
    lines = [x.split(":", 1)[1] for x in raw.splitlines() if x.strip().lower().startswith("followed:")]
    return [set(_WORD.findall(x.lower())) for x in lines]


def _unmatched(mine: list[set[str]], theirs: list[set[str]]) -> int:
    return sum(1 for a in mine if not any(len(a & b) / max(1, len(a | b)) >= 0.5 for b in theirs))


def _extras(report) -> int:
    text = getattr(report, "improvisation", "") or ""
    return 0 if text.strip().lower() == "none" else text.count(";") + 1


def features(p: Pair) -> dict[str, float]:
    """A pair's surface, as numbers: nothing here reads what a run did."""
    t, c = p.teacher, p.candidate
    ta, ca = action_lines(t.transcript), action_lines(c.transcript)
    tl = [x.strip() for x in t.transcript.splitlines() if x.strip()]
    cl = [x.strip() for x in c.transcript.splitlines() if x.strip()]
    sa, sc_, sl, scl = set(ta), set(ca), set(tl), set(cl)
    act_missing = sum(1 for x in ta if x not in sc_)
    act_added = sum(1 for x in ca if x not in sa)
    ft, fc = _followed(t.self_report), _followed(c.self_report)
    tr, cr = t.self_report.output_produced, c.self_report.output_produced
    tools_t = sum(1 for x in ta if _TOOL.match(x))
    tools_c = sum(1 for x in ca if _TOOL.match(x))
    return {
        "act_missing": act_missing,
        "act_added": act_added,
        "act_missing_share": act_missing / max(1, len(ta)),
        "act_added_share": act_added / max(1, len(ca)),
        "line_missing_share": sum(1 for x in tl if x not in scl) / max(1, len(tl)),
        "line_added_share": sum(1 for x in cl if x not in sl) / max(1, len(cl)),
        "length_ratio": len(c.transcript) / max(1, len(t.transcript)),
        "line_ratio": len(cl) / max(1, len(tl)),
        "action_ratio": len(ca) / max(1, len(ta)),
        "reply_ratio": len(cr) / max(1, len(tr)),
        "reply_same": float(tr == cr),
        "followed_diff": len(fc) - len(ft),
        "followed_lost": _unmatched(ft, fc),
        "followed_added": _unmatched(fc, ft),
        "extras_teacher": _extras(t.self_report),
        "extras_candidate": _extras(c.self_report),
        "extras_diff": _extras(c.self_report) - _extras(t.self_report),
        "tools_diff": tools_c - tools_t,
        "changes_diff": len(c.workspace_changes) - len(t.workspace_changes),
        "changes_chars_ratio": (sum(len(x.diff) for x in c.workspace_changes) + 1)
        / (sum(len(x.diff) for x in t.workspace_changes) + 1),
    }


def diff_text(p: Pair) -> str:
    """The line diff a character n-gram model reads: lines only the original has, then only the candidate."""
    t = [x.strip() for x in p.teacher.transcript.splitlines() if x.strip()]
    c = [x.strip() for x in p.candidate.transcript.splitlines() if x.strip()]
    st, sc_ = set(t), set(c)
    return "\n".join([*(f"- {x}" for x in t if x not in sc_), *(f"+ {x}" for x in c if x not in st)])


LENGTH = ("length_ratio",)
BANDS = ("length_ratio", "line_ratio")
TELLS = (
    "followed_diff",
    "followed_lost",
    "followed_added",
    "extras_teacher",
    "extras_candidate",
    "extras_diff",
    "reply_ratio",
    "reply_same",
)


@dataclass(frozen=True)
class Member:
    name: str
    what: str
    make: Callable[[], object] | None  # a scikit-learn estimator, or None: a fixed rule
    columns: tuple[str, ...] = ()  # the numeric features it reads; () with text: the diff text


def members() -> list[Member]:
    """The family: a fixed rule and six fitted learners, each reading one kind of surface."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    def lr(**kw):
        return LogisticRegression(class_weight="balanced", **{"max_iter": 2000, **kw})

    def tree(depth: int):
        return DecisionTreeClassifier(
            max_depth=depth, min_samples_leaf=5, class_weight="balanced", random_state=0
        )

    everything = tuple(features_names())
    return [
        Member(
            "line-diff rule", "some but fewer than half of the original's action lines missing verbatim", None
        ),
        Member(
            "length",
            "logistic regression on the log of the transcripts' length ratio",
            lambda: make_pipeline(FunctionTransformer(_log), lr()),
            LENGTH,
        ),
        Member("length band", "a depth-2 tree on the length and line-count ratios", lambda: tree(2), BANDS),
        Member(
            "self-report tells",
            "a depth-2 tree on the self-reports: steps claimed, lost, added, own additions, the reply",
            lambda: tree(2),
            TELLS,
        ),
        Member(
            "char n-grams",
            "logistic regression on character 2-5-grams (tf-idf) of the line diff",
            lambda: lr(C=1.0, max_iter=300),
        ),
        Member("diff tree", "a depth-3 tree on the diff's sizes and shares", lambda: tree(3), everything),
        Member(
            "diff features",
            "logistic regression on every surface feature",
            lambda: make_pipeline(StandardScaler(), lr(solver="liblinear")),
            everything,
        ),
    ]


def _log(x):
    import numpy as np

    return np.log(np.clip(x, 1e-3, None))


def features_names() -> list[str]:
    return [
        "act_missing",
        "act_added",
        "act_missing_share",
        "act_added_share",
        "line_missing_share",
        "line_added_share",
        "length_ratio",
        "line_ratio",
        "action_ratio",
        "reply_ratio",
        "reply_same",
        "followed_diff",
        "followed_lost",
        "followed_added",
        "extras_teacher",
        "extras_candidate",
        "extras_diff",
        "tools_diff",
        "changes_diff",
        "changes_chars_ratio",
    ]


def scenario(p: Pair) -> str:
    return p.id.split("/", 1)[0]


class Table:
    """The pairs as the learners read them, computed once (filtering refits on subsets)."""

    def __init__(self, pairs: Sequence[Pair]):
        import numpy as np

        self.pairs = list(pairs)
        feats = [features(p) for p in self.pairs]
        names = features_names()
        self.x = np.array([[f[n] for n in names] for f in feats], dtype=float)
        self.col = {n: i for i, n in enumerate(names)}
        from sklearn.feature_extraction.text import TfidfVectorizer

        # the n-gram vocabulary and weights come from every pair's diff (no label is read)
        vec = TfidfVectorizer(
            analyzer="char",
            ngram_range=(2, 5),
            min_df=2,
            sublinear_tf=True,
            max_features=8000,
            dtype=np.float32,
        )
        self.text = vec.fit_transform([diff_text(p) for p in self.pairs]).tocsr()
        self.y = np.array([p.label == REGRESSED for p in self.pairs], dtype=int)
        self.groups = np.array([scenario(p) for p in self.pairs])
        self.rule = np.array(
            [line_diff(p.teacher.transcript, p.candidate.transcript)[0] == REGRESSED for p in self.pairs],
            dtype=int,
        )


def out_of_fold(table: Table, idx=None, family: list[Member] | None = None) -> dict[str, Any]:
    """Each member's predictions (1: regressed) on the pairs `idx` (default all), each pair predicted
    by a fit on the other scenarios' pairs only (leave one scenario out)."""
    import numpy as np

    idx = np.arange(len(table.pairs)) if idx is None else np.asarray(idx)
    y, groups = table.y[idx], table.groups[idx]
    out: dict[str, Any] = {}
    for m in family or members():
        if m.make is None:
            out[m.name] = table.rule[idx].copy()
            continue
        data = table.text[idx] if not m.columns else table.x[idx][:, [table.col[c] for c in m.columns]]
        pred = np.zeros(len(idx), dtype=int)
        for g in np.unique(groups):
            test, train = groups == g, groups != g
            if len(np.unique(y[train])) < 2:
                pred[test] = int(y[train][0]) if train.any() else 0
                continue
            est = m.make()
            est.fit(data[train], y[train])  # type: ignore[attr-defined]
            pred[test] = est.predict(data[test])  # type: ignore[attr-defined]
        out[m.name] = pred
    return out


def figure(y, pred) -> dict:
    """Balanced accuracy (regressed against everything else) with its 95% interval."""
    reg = y == 1
    k1, n1 = int((pred[reg] == 1).sum()), int(reg.sum())
    k2, n2 = int((pred[~reg] == 0).sum()), int((~reg).sum())
    recall, spec = k1 / max(1, n1), k2 / max(1, n2)
    ci = balanced_interval(k1, n1, k2, n2) or (0.0, 1.0)
    return {
        "balanced_accuracy": round((recall + spec) / 2, 4),
        "balanced_accuracy_ci95": [ci[0], ci[1]],
        "regression_recall": round(recall, 4),
        "false_regression_rate": round(1 - spec, 4),
    }


def family_figures(pairs: Sequence[Pair]) -> list[LearnerFigure]:
    """Every member's out-of-fold figures on `pairs`, with the pairs each called regressed."""
    table = Table(pairs)
    preds = out_of_fold(table)
    by_name = {m.name: m for m in members()}
    return [
        LearnerFigure(
            name=name,
            what=by_name[name].what,
            **figure(table.y, pred),
            called_regressed=[p.id for p, v in zip(table.pairs, pred, strict=True) if v],
        )
        for name, pred in preds.items()
    ]


def adversarial_filter(
    table: Table,
    idx,
    *,
    target: float = 0.60,
    upper: float = 0.70,
    share: float = 0.04,
    floor: int = 0,
    refresh: int = 6,
    log: Callable[[str], None] = print,
):
    """Drop the pairs the family gets right most easily, a few at a time and as many of each label,
        refitting after each round, until no member's balanced accuracy is above `target` nor the upper
        end of its interval above `upper` (or only `floor` pairs are left). The n-gram model, the slow one,
    is refitted every `refresh` rounds and before stopping. Returns the kept indices."""
    import numpy as np

    keep = np.asarray(idx)
    key = np.array([hash_order(p.id) for p in table.pairs])
    family = members()
    slow = [m for m in family if not m.columns and m.make is not None]
    stale: dict[str, Any] = {}  # the n-gram model's last predictions, per pair index
    rounds = 0
    while True:
        fresh = rounds % refresh == 0
        rounds += 1
        preds = out_of_fold(table, keep, [m for m in family if fresh or m not in slow])
        for m in slow:
            if fresh:
                stale[m.name] = dict(zip(keep.tolist(), preds[m.name].tolist(), strict=True))
            else:
                preds[m.name] = np.array([stale[m.name][i] for i in keep.tolist()])
        figs = {n: figure(table.y[keep], v) for n, v in preds.items()}
        best = max(figs.values(), key=lambda f: f["balanced_accuracy"])
        worst_hi = max(f["balanced_accuracy_ci95"][1] for f in figs.values())
        log(
            f"  {len(keep)} pairs: best member {best['balanced_accuracy']:.3f}, "
            f"highest upper bound {worst_hi:.3f} "
            + " ".join(f"{n}={f['balanced_accuracy']:.2f}" for n, f in figs.items())
        )
        if (best["balanced_accuracy"] <= target and worst_hi <= upper) or len(keep) <= floor:
            if fresh:
                return keep
            rounds = 0  # measure the slow member on what is left before stopping
            continue
        # easiness: the share of the members with a signal that call the pair right
        strong = [n for n, f in figs.items() if f["balanced_accuracy"] > 0.5] or list(figs)
        y = table.y[keep]
        right = np.mean([preds[n] == y for n in strong], axis=0)
        k = max(1, math.ceil(share * len(keep) / 2))
        drop: list[int] = []
        for label in (0, 1):
            mine = np.where(y == label)[0]
            order = sorted(mine, key=lambda i: (-right[i], key[keep[i]]))
            drop += [i for i in order[:k] if right[i] > 0.5]
        if not drop:
            return keep
        keep = np.delete(keep, drop)


def hash_order(text: str) -> int:
    import hashlib

    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


TARGET, UPPER = 0.60, 0.70  # no member above this balanced accuracy, nor its interval above UPPER


def check(folder: str | None = None) -> tuple[list[str], list[LearnerFigure]]:
    """Refit the family on a suite and say what is wrong: a member above the stored best, figures
    other than the stored ones, or a stored best above TARGET (its interval above UPPER)."""
    from abeq.calibration.suite import load_suite

    suite = load_suite(folder)
    refit = family_figures(suite.pairs)
    if suite.learners is None:
        return ["the suite stores no learner figures"], refit
    best = suite.learners.best()
    problems = [
        f"{m.name} scores {m.balanced_accuracy:.4f}, above the stored best {best.balanced_accuracy:.4f}"
        for m in refit
        if m.balanced_accuracy > best.balanced_accuracy
    ]
    problems += [
        f"{m.name}: the upper end of its interval is {m.balanced_accuracy_ci95[1]:.4f} (> {UPPER})"
        for m in refit
        if m.balanced_accuracy_ci95[1] > UPPER
    ]
    if best.balanced_accuracy > TARGET:
        problems.append(f"the stored best, {best.name}, is {best.balanced_accuracy:.4f} (> {TARGET})")
    if [m.model_dump() for m in refit] != [m.model_dump() for m in suite.learners.members]:
        problems.append("the stored figures are not what a refit gives: run author.py")
    return problems, refit


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=None, help="a suite folder (default: the built-in one)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a member beats the stored figure")
    ap.add_argument("--json", action="store_true", help="print the refitted figures as JSON")
    a = ap.parse_args(argv)
    problems, refit = check(a.suite)
    if a.json:
        print(json.dumps([m.model_dump(exclude={"called_regressed"}) for m in refit], indent=1))
    else:
        for m in refit:
            lo, hi = m.balanced_accuracy_ci95
            print(f"{m.name:<20} balanced accuracy {m.balanced_accuracy:.3f} ({lo:.3f}-{hi:.3f})  {m.what}")
    for x in problems:
        print(f"problem: {x}", file=sys.stderr)
    return 1 if a.check and problems else 0


if __name__ == "__main__":
    sys.exit(main())
