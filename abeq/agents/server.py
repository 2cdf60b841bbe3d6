"""`abeq mcp`: the tools (abeq.agents.tools) on the official MCP SDK, over stdio or streamable HTTP
on loopback.

Each tool's inputs are named as the CLI's options with '_' for '-' (the run settings' come from the
one table, abeq.execution.options, so a new setting is a new input), checked with the CLI's own
messages; its result is structured (the outputSchema is the result model's JSON schema) with a short
text summary. Over HTTP the server answers only to loopback Host names and to requests carrying the
token printed at start-up (the desk's rule: abeq.desk.access).
"""

from __future__ import annotations

import asyncio
import hmac
import inspect
import json
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, cast

from pydantic import Field

from ..errors import AbeqError
from ..execution.bounds import Bounds
from ..execution.options import BY_NAME
from . import results as R
from .tools import PATHS, Tools

RUN_SETTINGS = tuple(n for n in BY_NAME if BY_NAME[n].cli and not BY_NAME[n].grants)
MUTATE_SETTINGS = tuple(
    n
    for n in RUN_SETTINGS
    if n not in ("review", "fail_fast", "min_judge_recall", "require_judge_recall", "gate")
)
TOKEN_ENV = "ABEQ_MCP_TOKEN"
KINDS: dict[Any, Any] = {str: str, int: int, float: float, bool: bool, "names": list[str]}

INSTRUCTIONS = (
    "abeq tests whether a rewritten document (a skill, a prompt, a CLAUDE.md/AGENTS.md) still makes a "
    "model do what the original did. check_set shows a transfer set's coverage; a person confirms the "
    "set (a tool call cannot); run starts a run and returns its run_id; run_status and report read it. "
    "A regression's behaviour_delta names what the candidate no longer does: add it back and run again "
    "(only the candidate is re-run)."
)


def instructions(bounds: Bounds) -> str:
    """The server's instructions: what abeq does, and what this server lets a tool call use."""
    commands = (
        "a runner command (runner_cmd) is allowed"
        if bounds.allow_commands
        else "a runner command (runner_cmd) is not allowed"
    )
    return (
        f"{INSTRUCTIONS} On this server: models {bounds.models_said()}; API bases "
        f"{bounds.api_bases_said()}; {commands}; files under {bounds.root}."
    )


def _param(name: str, annotation: Any, default: Any, description: str) -> inspect.Parameter:
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[annotation, Field(description=description)],
    )


def _setting(name: str, bounds: Bounds | None = None) -> inspect.Parameter:
    o = BY_NAME[name]
    said = o.help + (f" (one of: {', '.join(o.choices)})" if o.choices else "")
    if bounds is not None and name in ("runner_model", "judge_model"):
        said = "litellm model string for the runner" if name == "runner_model" else o.help.split(" (")[0]
        said += f"; on this server {bounds.models_said()}"
    elif bounds is not None and name in ("api_base", "judge_api_base"):
        said = f"{o.help.split(' (')[0]}; on this server {bounds.api_bases_said()}"
    return _param(name, KINDS[o.kind] | None, None, f"{said}; as `{o.flag}`")


PATH_HELP = {
    "original": "the teacher document: a path under the project root (or git:REV:PATH)",
    "candidate": "the rewritten document under test: a path under the project root (or git:REV:PATH)",
    "transfer_set": "the cases (.json, .yaml, .csv, .jsonl): a path under the project root",
}


def _tool(
    server: Any,
    name: str,
    description: str,
    params: list[inspect.Parameter],
    output: type[R.Result],
    body: Callable[[dict[str, Any], Any], Awaitable[R.Result]],
    summary: Callable[[Any], str],
) -> None:
    """Register `body(arguments, ctx)` as tool `name` with these inputs and `output`'s schema."""
    from mcp.server.mcpserver import Context
    from mcp.types import CallToolResult, TextContent

    async def tool(ctx: Context, **given: Any) -> CallToolResult:
        # the arguments as the client sent them (an unknown one is named, not silently dropped)
        raw = (ctx.request_context.params or {}).get("arguments")
        args = dict(raw) if isinstance(raw, dict) else {k: v for k, v in given.items() if v is not None}
        try:
            args = _checked(args, params)
            result = await body(args, ctx)
        except AbeqError as e:
            return CallToolResult(content=[TextContent(type="text", text=e.render())], is_error=True)
        data = result.model_dump(mode="json", by_alias=True)
        return CallToolResult(
            content=[TextContent(type="text", text=summary(result))], structured_content=data
        )

    from mcp.server.mcpserver.tools.base import Tool

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    ret = Annotated[CallToolResult, output]

    def sign(fn: Any, ps: list[inspect.Parameter]) -> Any:
        fn.__signature__ = inspect.Signature([ctx_param, *ps], return_annotation=ret)
        fn.__annotations__ = {"ctx": Context, **{p.name: p.annotation for p in ps}, "return": ret}
        fn.__name__ = name
        return fn

    # the SDK checks nothing (every input Any, optional): abeq checks each argument itself, in the
    # CLI's words (_checked); the schema a client reads is the typed one
    loose = [p.replace(annotation=Any, default=None) for p in params]
    server.add_tool(sign(tool, loose), name=name, description=description)

    async def typed(ctx: Context, **given: Any) -> None: ...

    server._tool_manager.get_tool(name).parameters = Tool.from_function(sign(typed, params)).parameters


def _checked(args: dict[str, Any], params: list[inspect.Parameter]) -> dict[str, Any]:
    """A tool call's arguments checked as the CLI checks its options, in its words: an unknown one
    named (with the nearest known name), a required one missing, a number given as digits read as
    one (as the CLI reads every option), anything else of the wrong kind refused by its option."""
    import difflib

    from ..errors import InputError

    known = {p.name: p for p in params}
    # a setting the tool does not take (trust_code) is refused by the settings, with why
    unknown = [k for k in args if k not in known and k not in BY_NAME]
    if unknown:
        said = []
        for k in unknown:
            near = difflib.get_close_matches(str(k), known, n=1)
            said.append(f"{k!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
        raise InputError(
            f"unknown argument{'s' if len(said) > 1 else ''}: {', '.join(said)}",
            hint="This tool takes: " + ", ".join(known) + ".",
        )
    missing = [n for n, p in known.items() if p.default is inspect.Parameter.empty and args.get(n) is None]
    if missing:
        raise InputError(
            "the following arguments are required: " + ", ".join("--" + n.replace("_", "-") for n in missing)
        )
    out = dict(args)
    for n, v in args.items():
        if v is None or n not in known:
            continue
        kind = _kind(known[n].annotation)
        flag = "--" + n.replace("_", "-")
        if kind in (int, float) and isinstance(v, str):
            try:
                v = int(v) if kind is int else float(v)
            except ValueError:
                what = "a whole number" if kind is int else "a number"
                raise InputError(f"argument {flag}: expected {what}, got {v!r}") from None
        if kind is int and (isinstance(v, bool) or not isinstance(v, int)):
            if not (isinstance(v, float) and v.is_integer()):
                raise InputError(f"argument {flag}: expected a whole number, got {v!r}")
            v = int(v)
        elif kind is float and (isinstance(v, bool) or not isinstance(v, int | float)):
            raise InputError(f"argument {flag}: expected a number, got {v!r}")
        elif kind is str and not isinstance(v, str):
            raise InputError(f"argument {flag}: expected text, got {v!r}")
        elif kind is bool and not isinstance(v, bool):
            raise InputError(f"argument {flag}: expected true or false, got {v!r}")
        out[n] = v
    return out


def _kind(annotation: Any) -> Any:
    """int, float, str, bool or list, from a parameter's annotation (Annotated, `| None` unwrapped)."""
    import typing

    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    first = args[0]
    return list if typing.get_origin(first) is list else first


def _thread(fn: Callable[[], R.Result]) -> Awaitable[R.Result]:
    import anyio

    return anyio.to_thread.run_sync(fn)


def build(bounds: Bounds, tools: Tools | None = None):
    """The MCP server with abeq's tools, within `bounds`."""
    from mcp.server.mcpserver import MCPServer

    t = tools or Tools(bounds)
    server = MCPServer(name="abeq", instructions=instructions(bounds))
    paths = {n: _param(n, str, inspect.Parameter.empty, PATH_HELP[n]) for n in PATHS}
    settings = {n: _setting(n, bounds) for n in RUN_SETTINGS}

    async def check_set(a: dict, ctx: Any) -> R.Result:
        allow = a.get("allow_thin", False)
        return await _thread(lambda: t.check_set(a.get("original"), a.get("transfer_set"), allow))

    _tool(
        server,
        "check_set",
        "A transfer set against the original: its sections, coverage, the sections no case covers, "
        "and whether a person has confirmed it (with the command they use to confirm it).",
        [paths["original"], paths["transfer_set"], settings["allow_thin"]],
        R.CheckSet,
        check_set,
        lambda r: (
            f"{r.cases} cases · coverage {r.coverage_pct:g}% ({len(r.sections_covered)}/"
            f"{len(r.sections_identified)} sections) · uncovered: {', '.join(r.uncovered) or 'none'} · "
            f"{r.confirmation}"
            + ("" if r.confirmed else f" — a person confirms it with: {r.confirm_command}")
        ),
    )

    async def run(a: dict, ctx: Any) -> R.RunStarted:
        notify = _notifier(ctx)
        wait = bool(a.pop("wait", False))
        started = cast(R.RunStarted, await _thread(lambda: t.run(a, notify)))
        run_id = started.run_id
        if wait and run_id is not None:
            # the call stays open while the run goes on: the progress notifications reach a client
            # that drops those coming after a call's answer (the SDK's progress_callback does)
            bg = t.runs.get(run_id)
            while bg is not None and bg.thread.is_alive():
                await asyncio.sleep(0.2)
            status = cast(R.RunStatus, await _thread(lambda: t.run_status(run_id)))
            said = f"run {run_id} {status.status}: {status.done}/{status.total} cases judged"
            started = started.model_copy(update={"message": said + "; read it with report"})
        if notify is not None:
            notify.closed()  # type: ignore[attr-defined]
        return started

    _tool(
        server,
        "run",
        "Start a run of the original and the candidate over a confirmed transfer set; returns its run_id "
        "at once (the run goes on in the background), or when it has ended with wait: true (progress "
        "comes as notifications on the call's progress token while the call is open). Read it with "
        "run_status and report. A set no person confirmed does not run: the answer gives the command "
        "they use. Settings are named as `abeq run`'s options with '_' for '-'.",
        [
            paths["original"],
            paths["candidate"],
            paths["transfer_set"],
            *settings.values(),
            _param(
                "wait",
                bool | None,
                None,
                "answer when the run has ended, not at once: the call stays open and its progress "
                "notifications (one per case judged) arrive while it does",
            ),
        ],
        R.RunStarted,
        run,
        lambda r: "".join([r.message, *(f"\nwarning: {w}" for w in r.warnings)]),
    )

    async def run_status(a: dict, ctx: Any) -> R.Result:
        return await _thread(lambda: t.run_status(_run_id(a)))

    run_id = _param("run_id", int, inspect.Parameter.empty, "the id `run` returned")
    _tool(
        server,
        "run_status",
        "Whether a run has finished, and how many cases are judged. A run that will not finish by "
        "itself (interrupted: the process that ran it ended; failed) says what to do in next_step.",
        [run_id],
        R.RunStatus,
        run_status,
        lambda r: (
            f"run {r.run_id}: {r.status}, {r.done}/{r.total} cases judged"
            + (f" · error: {r.error}" if r.error else "")
            + (f" · next: {r.next_step}" if r.next_step else "")
        ),
    )

    gate = _setting("gate")

    async def report(a: dict, ctx: Any) -> R.Result:
        return await _thread(lambda: t.report(_run_id(a), a.get("gate") or BY_NAME["gate"].default))

    _tool(
        server,
        "report",
        "A finished run's report (abeq's report schema), the gate, each regressed or diverged case with "
        "the behaviour the candidate lost, the calls made, and the trust figures (judge calibration, A/A "
        "noise, the set's mutation score, what the models are).",
        [run_id, gate],
        R.RunReportResult,
        report,
        _report_summary,
    )

    mutate_params = [paths["original"], paths["transfer_set"], *(settings[n] for n in MUTATE_SETTINGS)]
    mutate_params += [
        _param("max_mutants", int | None, None, "test only the first N section mutants; as `--max-mutants`"),
        _param("section", list[str] | None, None, "test only these sections' mutants; as `--section`"),
        _param("all_cases", bool | None, None, "run every case on every mutant; as `--all-cases`"),
    ]

    async def mutate(a: dict, ctx: Any) -> R.Result:
        return await _thread(lambda: t.mutate(a))

    _tool(
        server,
        "mutate",
        "Mutation-test a confirmed transfer set: delete each section of the original; does the set notice? "
        "Answers at once with a mutation_id (the test goes on in the background, like a run); read it "
        "with mutate_status, whose result holds the score (killed / mutants) and the map once finished. "
        "An identical finished test answers with its result at once.",
        mutate_params,
        R.MutationStarted,
        mutate,
        lambda r: (
            r.message
            + (
                f": mutation score {r.result.score:.2f}, {r.result.killed} of {r.result.mutants} killed"
                if r.result
                else ""
            )
        ),
    )

    async def mutate_status(a: dict, ctx: Any) -> R.Result:
        return await _thread(lambda: t.mutate_status(int(a["mutation_id"])))

    _tool(
        server,
        "mutate_status",
        "Whether a mutation test has finished, how many mutants are done, and its result once finished; "
        "a test that will not finish by itself says what to do in next_step.",
        [_param("mutation_id", int, inspect.Parameter.empty, "the id `mutate` returned")],
        R.MutationStatus,
        mutate_status,
        lambda r: (
            f"mutation test {r.mutation_id}: {r.status}, {r.done}/{r.mutants} mutants"
            + (f" · score {r.result.score:.2f} ({r.result.killed} killed)" if r.result else "")
            + (f" · error: {r.error}" if r.error else "")
            + (f" · next: {r.next_step}" if r.next_step else "")
        ),
    )

    async def history(a: dict, ctx: Any) -> R.Result:
        return await _thread(lambda: t.history(str(a.get("review") or "")))

    _tool(
        server,
        "history",
        "The rounds of a review (runs given the same `review` name): size, verdicts, directness.",
        [_param("review", str, inspect.Parameter.empty, "the review's name, as given to run")],
        R.HistoryResult,
        history,
        lambda r: (
            f"review {r.review}: {len(r.rounds)} round(s)"
            + "".join(f"; round {x['round']}: {x['regressed']} regressed" for x in r.rounds if x.get("round"))
        ),
    )

    async def export(a: dict, ctx: Any) -> R.Result:
        fmt, g = a.get("format") or "markdown", a.get("gate") or BY_NAME["gate"].default
        return await _thread(lambda: t.export(_run_id(a), fmt, g))

    _tool(
        server,
        "export",
        "A stored run as text: report (JSON), record (JSON), markdown, csv or junit.",
        [
            run_id,
            _param("format", str | None, None, "report, record, markdown (default), csv or junit"),
            gate,
        ],
        R.ExportResult,
        export,
        lambda r: (
            r.text if r.format == "markdown" else f"run {r.run_id} as {r.format}: {len(r.text)} characters"
        ),
    )

    async def compare(a: dict, ctx: Any) -> R.Result:
        return await _thread(lambda: t.compare(a))

    _tool(
        server,
        "compare",
        "Blind A/B comparison of two outputs for a task, judged in both orders (as `abeq compare`).",
        [
            _param("task", str, inspect.Parameter.empty, "file with the task both outputs answer"),
            _param("a", str, inspect.Parameter.empty, "file with the first output"),
            _param("b", str, inspect.Parameter.empty, "file with the second output"),
            _param("assertions", str | None, None, "JSON file of assertions; as `--assertions`"),
            _param("model", str | None, None, "the judge's model string; as `--model`"),
            _param("api_base", str | None, None, "as `--api-base`"),
            _param("seed", int | None, None, "which output is shown as A first; as `--seed`"),
            _param("content_weight", float | None, None, "share of content in overall (0-1, default 0.6)"),
        ],
        R.CompareResult,
        compare,
        lambda r: f"winner: {r.winner}{' (order-dependent)' if r.order_dependent else ''}",
    )
    server.abeq_tools = t  # type: ignore[attr-defined]  # for tests and a clean shutdown
    return server


def _run_id(a: dict) -> int:
    return int(a["run_id"])  # checked by _checked: a whole number (digits too)


def _report_summary(r: R.RunReportResult) -> str:
    """The report in words an agent acts on: the outcome, each lost behaviour, each case stopped at a
    gate (a rule after it is never reached: it cannot be fixed by adding the rule again), the cases
    not run and the errors, and what to do next."""
    s = r.report.summary
    head = (
        f"run {r.run_id}: {'PASS' if r.passed else 'FAIL'} ({r.gate['gate']}): {s.equivalents} equivalent, "
        f"{s.divergences} diverged, {s.regressions} regressed · {r.calls.get('made', 0)} calls made "
        f"({r.calls.get('teacher_made', 0)} teacher)"
    )
    lost = [f"- {x.case_id} ({x.verdict}): {x.behaviour_delta}" for x in r.lost]
    gated = [
        f"- {t.case_id} stops at the gate in {t.section!r}: the runner asked the user there and had no "
        "scripted answer, so a rule placed after that gate is never reached in this case (move the rule "
        "before the gate, or give the case a gate_responses answer)"
        for t in r.report.gate_truncated
    ]
    failed = [
        f"- {e['case_id']} errored ({e['stage']}): {e['error']}"
        for e in r.errors
        if e["case_id"] not in r.not_run
    ]
    out = [head, *lost, *gated, *failed]
    if r.not_run:
        more = "…" if len(r.not_run) > 10 else ""
        out.append(f"not run: {len(r.not_run)} case(s) ({', '.join(r.not_run[:10])}{more})")
    if r.next_step:
        out.append(f"next: {r.next_step}")
    return "\n".join([*out, *(f"caveat: {c}" for c in r.trust.model_caveats)])


def _notifier(ctx: Any) -> Callable[[int, dict], None] | None:
    """Progress notifications from the run's thread, one per case judged. While the call is open
    they go through the SDK's own progress path (the client's progress_callback receives them, on
    stdio, HTTP or in process); after its answer (the run outlives the call) they go on the call's
    progress token when the client gave one (a client that forgets a token once answered drops
    them: `run` with wait: true keeps the call open). `notify.closed()` marks the answer sent."""
    try:
        rc = ctx.request_context
        token = ((rc.params or {}).get("_meta") or {}).get("progressToken")
        session, loop = rc.session, asyncio.get_running_loop()
    except Exception:
        return None
    last, open_ = [-1], [True]

    def notify(run_id: int, p: dict) -> None:
        if p.get("done") == last[0]:
            return  # one notification per case judged
        last[0] = p.get("done", 0)
        done, total = float(p.get("done", 0)), float(p.get("total") or 0)
        said = f"run {run_id}: {p.get('done')}/{p.get('total')} cases"
        if open_[0]:
            coro = session.report_progress(done, total, said)
        elif token is not None:
            coro = session.send_progress_notification(token, done, total, said)
        else:
            return
        asyncio.run_coroutine_threadsafe(coro, loop)

    notify.closed = lambda: open_.__setitem__(0, False)  # type: ignore[attr-defined]
    return notify


# ------------------------------------------------------------ running it
def serve_stdio(bounds: Bounds) -> None:
    build(bounds).run("stdio")


def http_app(bounds: Bounds, token: str, host: str = "127.0.0.1"):
    """The streamable HTTP app behind the token check (a bearer header or `?token=`), answering only to
    loopback Host names (a page elsewhere that resolves to 127.0.0.1 is refused)."""
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.responses import PlainTextResponse

    from ..desk.access import LOOPBACK_HOSTS

    hosts = [f"{h}:*" for h in LOOPBACK_HOSTS if h != "::1"] + ["[::1]:*"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )
    inner = build(bounds).streamable_http_app(transport_security=security, host=host)

    async def app(scope, receive, send):
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
            given = headers.get("authorization", "").removeprefix("Bearer ").strip()
            if not given:
                from urllib.parse import parse_qs

                given = (parse_qs(scope.get("query_string", b"").decode()).get("token") or [""])[0]
            if not hmac.compare_digest(given.encode(), token.encode()):
                said = "abeq mcp: this server needs the token it printed at start-up (a bearer token)"
                await PlainTextResponse(said, status_code=401)(scope, receive, send)
                return
        await inner(scope, receive, send)

    return app


def serve_http(bounds: Bounds, port: int, token: str | None = None) -> None:
    import os

    import uvicorn

    token = token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    host = "127.0.0.1"
    config = uvicorn.Config(http_app(bounds, token, host), host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    print(
        json.dumps({"url": f"http://{host}:{port}/mcp", "header": f"Authorization: Bearer {token}"}),
        file=sys.stderr,
        flush=True,
    )
    server.run()
