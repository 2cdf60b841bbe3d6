"""promptfoo's code, run the way promptfoo runs it: `javascript` asserts and transforms with Node,
`python` asserts and transforms with the Python that runs abeq, each in a subprocess with a time
limit. The contract is promptfoo's (src/assertions/javascript.ts, python.ts, transform.ts):

- an inline value is a function body of (output, context): one line is `return <line>` (after a
  leading const/let/var statement, before its last expression); several lines are used as written
  (JavaScript) or indented into `def main(output, context):` (Python);
- a file (the importer reads `file://x.js[:fn]` in beside the check, options["script"]) exports the
  function: module.exports / default / the named one (JavaScript), `get_assert` or the named one
  (Python; `get_transform` for a transform);
- the result: a boolean; a number (passes when > 0, or >= the threshold); "true"/"false"; or a
  grading result {pass, score, reason}, failed when its score is below the threshold; `not-` inverts.
  An error, a timeout or another kind of result fails the check, with the reason, as in promptfoo.
- context: {prompt (the case input), vars, test: {vars, metadata}, config, providerResponse: {output}}.

Only what cannot run here is skipped (abeq.execution.checks): a missing runtime, a TypeScript file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TIMEOUT = 20.0  # seconds for one script on one arm; promptfoo has none, a review must end
_MARK = "\x1eabeq-result\x1e"

_NODE = r"""
const fs = require('fs'), path = require('path'), { pathToFileURL } = require('url');
console.log = console.info = console.debug = (...a) => process.stderr.write(a.join(' ') + '\n');
function body(code) {
  const t = code.trim().replace(/;+\s*$/, '');
  if (/^(const|let|var)\s/.test(t)) {
    const i = t.lastIndexOf(';');
    if (i !== -1 && t.slice(i + 1).trim()) return t.slice(0, i + 1) + ' return ' + t.slice(i + 1).trim();
    return t;
  }
  return 'return ' + t;
}
(async () => {
  const job = JSON.parse(fs.readFileSync(0, 'utf8'));
  let fn;
  if (job.file) {
    const mod = await import(pathToFileURL(job.file).href);  // CommonJS: default is module.exports
    const d = mod.default;
    if (job.fn) fn = mod[job.fn] !== undefined ? mod[job.fn] : d && d[job.fn];
    else fn = typeof d === 'function' ? d : d && typeof d.default === 'function' ? d.default : undefined;
    if (typeof fn !== 'function') {
      throw new Error(path.basename(job.file) + ' does not export a function ' + (job.fn || '(default)'));
    }
  } else {
    const code = job.code.trimEnd();
    fn = new Function('output', 'context', code.includes('\n') ? code : body(code));
  }
  const result = await fn(job.output, job.context);
  process.stdout.write(job.mark + JSON.stringify(result === undefined ? null : result));
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(3); });
"""

_PYTHON = r"""
import contextlib, importlib.util, json, sys
job = json.loads(sys.stdin.read())
with contextlib.redirect_stdout(sys.stderr):
    if job["file"]:
        spec = importlib.util.spec_from_file_location("promptfoo_script", job["file"])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fn = getattr(mod, job["fn"], None)
        if not callable(fn):
            raise SystemExit(f"{job['file'].rsplit('/', 1)[-1]} has no function {job['fn']}")
    else:
        code = job["code"]
        if "\n" in code:
            lines = code.split("\n")
            indented = [ln for ln in lines if ln.strip() and ln[0].isspace()]
            indent = indented[0][: len(indented[0]) - len(indented[0].lstrip())] if indented else "    "
            src = "def main(output, context):\n" + "\n".join(indent + ln for ln in lines)
        else:
            src = "def main(output, context):\n    return " + code
        scope = {"json": json}
        exec(compile(src, "<promptfoo python>", "exec"), scope)
        fn = scope["main"]
    result = fn(job["output"], job["context"])
sys.stdout.write(job["mark"] + json.dumps(result, default=str))
"""


class ScriptError(Exception):
    """A script that could not be run or did not finish; the check fails with this as its evidence."""


def runtime_missing(language: str) -> str:
    """Why a script in `language` cannot run here ("" when it can)."""
    if language == "javascript" and not shutil.which("node"):
        return "runs JavaScript, and Node.js (node) is not installed here"
    return ""


def run(language: str, code: str, output: Any, context: dict, *, script: dict | None = None) -> Any:
    """The value a promptfoo script returns for `output`. `script`: {"name", "source", "fn"} of a
    file the importer read in; without it `code` is an inline function body. Raises ScriptError."""
    job: dict[str, Any] = {"code": code, "output": output, "context": context, "mark": _MARK, "file": ""}
    with tempfile.TemporaryDirectory(prefix="abeq-script-") as tmp:
        if script:
            source = str(script.get("source", ""))
            f = Path(tmp) / Path(str(script.get("name") or "script")).name
            if f.suffix == ".js" and re.search(r"^\s*export\s", source, re.M):
                f = f.with_suffix(".mjs")  # an ES module where its package.json said so
            f.write_text(source, encoding="utf-8")
            job["file"], job["fn"] = str(f), script.get("fn") or ""
        if language == "javascript":
            argv = ["node", "-e", _NODE]
        else:
            argv = [sys.executable, "-c", _PYTHON]
        try:
            done = subprocess.run(
                argv,
                input=json.dumps(job, ensure_ascii=False),
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                cwd=tmp,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            )
        except subprocess.TimeoutExpired:
            raise ScriptError(f"did not finish within {TIMEOUT:g}s") from None
        except OSError as e:
            raise ScriptError(f"could not start {argv[0]}: {e}") from None
    if _MARK not in done.stdout:
        lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
        why = next(
            (ln for ln in reversed(lines) if "Error" in ln or "error" in ln), lines[-1] if lines else ""
        )
        raise ScriptError(f"threw an error: {why.strip()[:200] or f'exit {done.returncode}'}")
    return json.loads(done.stdout.rsplit(_MARK, 1)[1])


def verdict(result: Any, threshold: float | None, inverse: bool) -> tuple[bool, str]:
    """(passed, evidence) from what a script returned, by promptfoo's rules."""
    if isinstance(result, str) and result.strip().lower() in ("true", "false"):
        result = result.strip().lower() == "true"
    if isinstance(result, str) and result.startswith("{"):
        try:
            result = json.loads(result)
        except json.JSONDecodeError:
            pass
    if isinstance(result, bool):
        passed, evidence = result, f"returned {str(result).lower()}"
    elif (score := float(result) if isinstance(result, (int, float)) else _number(result)) is not None:
        passed = score > 0 if threshold is None else score >= threshold
        evidence = f"score {score:g}" + ("" if threshold is None else f" (threshold {threshold:g})")
    elif isinstance(result, dict) and "pass" in result:
        score = result.get("score")
        passed = bool(result["pass"])
        if threshold is not None and isinstance(score, (int, float)) and score < threshold:
            passed = False
        reason = str(result.get("reason") or "")
        evidence = f"pass {str(passed).lower()}" + (
            f", score {score:g}" if isinstance(score, (int, float)) else ""
        )
        evidence += f": {reason[:160]}" if reason else ""
    else:
        shown = json.dumps(result, ensure_ascii=False, default=str)[:80]
        return False, f"returned {shown}, not a boolean, a number or a grading result"
    return passed != inverse, evidence


def _number(v: Any) -> float | None:
    try:
        return float(v) if isinstance(v, str) and v.strip() else None
    except ValueError:
        return None


def as_text(value: Any) -> str:
    """What a code check reads after a transform: text as is, anything else as JSON (promptfoo's
    outputString)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
