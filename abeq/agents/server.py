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
from typing import Annotated, Any

from pydantic import Field

from ..errors import AbeqError
from ..execution.options import BY_NAME
from . import results as R
from .bounds import Bounds
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


def _param(name: str, annotation: Any, default: Any, description: str) -> inspect.Parameter:
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[annotation, Field(description=description)],
    )


def _setting(name: str) -> inspect.Parameter:
    o = BY_NAME[name]
    said = o.help + (f" (one of: {', '.join(o.choices)})" if o.choices else "")
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
            result = await body(args, ctx)
        except AbeqError as e:
            return CallToolResult(content=[TextContent(type="text", text=e.render())], is_error=True)
        data = result.model_dump(mode="json", by_alias=True)
        return CallToolResult(
            content=[TextContent(type="text", text=summary(result))], structured_content=data
        )

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    ret = Annotated[CallToolResult, output]
    tool.__signature__ = inspect.Signature([ctx_param, *params], return_annotation=ret)  # type: ignore[attr-defined]
    tool.__annotations__ = {"ctx": Context, **{p.name: p.annotation for p in params}, "return": ret}
    tool.__name__ = name
    server.add_tool(tool, name=name, description=description)


def _thread(fn: Callable[[], R.Result]) -> Awaitable[R.Result]:
    import anyio

    return anyio.to_thread.run_sync(fn)


def build(bounds: Bounds, tools: Tools | None = None):
    """The MCP server with abeq's tools, within `bounds`."""
    from mcp.server.mcpserver import MCPServer

    t = tools or Tools(bounds)
    server = MCPServer(name="abeq", instructions=INSTRUCTIONS)
    paths = {n: _param(n, str, inspect.Parameter.empty, PATH_HELP[n]) for n in PATHS}
    settings = {n: _setting(n) for n in RUN_SETTINGS}

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

    async def run(a: dict, ctx: Any) -> R.Result:
        notify = _notifier(ctx)
        return await _thread(lambda: t.run(a, notify))

    _tool(
        server,
        "run",
        "Start a run of the original and the candidate over a confirmed transfer set; returns its run_id "
        "at once (the run goes on in the background; progress comes as notifications). Read it with "
        "run_status and report. A set no person confirmed does not run: the answer gives the command "
        "they use. Settings are named as `abeq run`'s options with '_' for '-'.",
        [paths["original"], paths["candidate"], paths["transfer_set"], *settings.values()],
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
        "Whether a run has finished, and how many cases are judged.",
        [run_id],
        R.RunStatus,
        run_status,
        lambda r: (
            f"run {r.run_id}: {r.status}, {r.done}/{r.total} cases judged"
            + (f" · error: {r.error}" if r.error else "")
        ),
    )

    gate = _setting("gate")

    async def report(a: dict, ctx: Any) -> R.Result:
        return await _thread(lambda: t.report(_run_id(a), a.get("gate") or "compress"))

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
        "Returns the score (killed / mutants) and the map.",
        mutate_params,
        R.MutationResult,
        mutate,
        lambda r: (
            f"mutation score {r.score:.2f}: {r.killed} of {r.mutants} mutants killed"
            + (f"; incomplete: {', '.join(r.incomplete)}" if r.incomplete else "")
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
        fmt, g = a.get("format") or "markdown", a.get("gate") or "compress"
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
    from ..errors import InputError

    v = a.get("run_id")
    if isinstance(v, bool) or not isinstance(v, int):
        raise InputError(f"argument run_id: expected a whole number, got {v!r}")
    return v


def _report_summary(r: R.RunReportResult) -> str:
    s = r.report.summary
    head = (
        f"run {r.run_id}: {'PASS' if r.passed else 'FAIL'} ({r.gate['gate']}): {s.equivalents} equivalent, "
        f"{s.divergences} diverged, {s.regressions} regressed · {r.calls.get('made', 0)} calls made "
        f"({r.calls.get('teacher_made', 0)} teacher)"
    )
    lost = [f"- {x.case_id} ({x.verdict}): {x.behaviour_delta}" for x in r.lost]
    return "\n".join([head, *lost, *(f"caveat: {c}" for c in r.trust.model_caveats)])


def _notifier(ctx: Any) -> Callable[[int, dict], None] | None:
    """Progress notifications from the run's thread, on the request's progress token when the client
    gave one (the run outlives the call, so they go on after its answer)."""
    try:
        rc = ctx.request_context
        token = ((rc.params or {}).get("_meta") or {}).get("progressToken")
        session, loop = rc.session, asyncio.get_running_loop()
    except Exception:
        return None
    if token is None:
        return None
    last = [-1]

    def notify(run_id: int, p: dict) -> None:
        if p.get("done") == last[0]:
            return  # one notification per case judged
        last[0] = p.get("done", 0)
        coro = session.send_progress_notification(
            token,
            float(p.get("done", 0)),
            float(p.get("total") or 0),
            f"run {run_id}: {p.get('done')}/{p.get('total')} cases",
        )
        asyncio.run_coroutine_threadsafe(coro, loop)

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
