"""`sourcebook ask` and `sourcebook remember`: get_answer and episodes from the shell."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from answer.serving.tool_contracts import BY_NAME, GetAnswerRequest
from sourcebook.cli.contract import tool_options, tool_request
from sourcebook.cli.paths import index_uri_option, path_option, reader_path, user_settings

if TYPE_CHECKING:
    from answer.answering.get_answer import AnswerContext
    from answer.answering.response import AnswerResponse


@click.command("ask")
@tool_options(BY_NAME["get_answer"], argument="question")
@path_option(dest="root")
@index_uri_option
@click.option("--json", "as_json", is_flag=True, help="Print the get_answer contract object as JSON.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the answer cache.")
def ask_command(root: str | None, as_json: bool, no_cache: bool, **values: Any) -> None:
    """Answer QUESTION about the repository, with citations and a checked confidence.

    With an LLM configured by you (SOURCEBOOK_LLM_* / OPENAI_* environment variables or
    ~/.config/sourcebook/config.toml; never the repository's own config), the question and the evidence
    found, redacted, are sent to it; without one, nothing leaves the machine.
    """
    from answer.answering.get_answer import get_answer, parse_include, resolve_context
    from answer.serving.workspace import load_workspace

    request = tool_request(BY_NAME["get_answer"], values)
    assert isinstance(request, GetAnswerRequest)
    flags = parse_include(request.include)
    workspace = load_workspace(reader_path(option=root), settings=user_settings())
    # the engine directly (not Tools) for the one CLI-only switch, --no-cache; same arguments as the tool
    context = resolve_context(workspace, request.repo)
    reply = get_answer(context, request.question, scope=request.scope, repo=request.repo, include=flags,
                       use_cache=not no_cache)
    if as_json:
        click.echo(reply.to_json(indent=2))
        return
    click.echo(render(reply, full="evidence" in flags, semantic_note=_semantic_note(context)))


def _semantic_note(context: AnswerContext) -> str | None:
    """Why the answer was searched without the semantic tier, and what adds it (None: the tier ran)."""
    store = context.store
    if store is None or store.embedder is not None:
        return None
    from sourcebook.cli.doctor import semantic_off_note

    return semantic_off_note(context.config.embed, index_has_vectors=bool(store.meta.get("dim")))


HUMAN_EVIDENCE_CHARS = 3000


def render(reply: AnswerResponse, full: bool = False, semantic_note: str | None = None) -> str:
    """The human form of a reply: the answer, then where it comes from and how far to trust it. A degraded
    reply's evidence follows its summary, shortened for reading unless `full` (--json carries all of it).
    `semantic_note`: why the search ran without the semantic tier, shown once beside the confidence."""
    text = reply.answer.rstrip()
    if reply.degraded and reply.evidence:
        shown = "\n\n".join(e.text.rstrip() for e in reply.evidence)
        if not full and len(shown) > HUMAN_EVIDENCE_CHARS:
            shown = (shown[:HUMAN_EVIDENCE_CHARS].rstrip()
                     + "\n… (evidence shortened: --include evidence or --json)")
        text += "\n\n" + shown
    out = [text, ""]
    status = f"confidence: {reply.confidence}"
    if reply.degraded:
        status += f" (degraded: {reply.degraded})"
    elif reply.grounding:
        status += f" (grounding: {reply.grounding})"
    if reply.retrieval_quality:
        status += f"; retrieval: {reply.retrieval_quality}"
    out.append(status)
    if semantic_note:
        out.append(f"semantic tier {semantic_note}")
    if reply.citations:
        out.append("citations:")
        out.extend(f"  - {path}" for path in reply.citations)
    if reply.best_guesses:
        out.append("best guesses:")
        out.extend(f"  - {g.file} ({g.score:.4f}): {g.why_relevant}" for g in reply.best_guesses)
    elif reply.candidate_files:
        out.append("also look at: " + ", ".join(reply.candidate_files))
    for body in reply.symbol_bodies or []:
        changed = " (changed since indexing)" if body.changed_since_index else ""
        out.append(f"symbol {body.qualname}: {body.path}:{body.start_line}-{body.end_line}{changed}")
    for episode in reply.episodes or []:
        where = episode.scope or "whole repository"
        out.append(f"episode [{episode.recorded_at[:10]}, {where}]: {episode.text}")
    if reply.note:
        out.append(f"note: {reply.note}")
    meta = reply.meta
    total = meta.timings_ms.get("total")
    timing = f"{total:.0f} ms" if total is not None else ""
    # the contract's `hint` tells an agent which tool to call next; a person reading this has no tools
    out.append(f"({'cache hit, ' if meta.cache_hit else ''}{timing})")
    return "\n".join(out)


@click.command("remember")
@tool_options(BY_NAME["remember"], argument="text")
@path_option(dest="root")
@index_uri_option
def remember_command(root: str | None, **values: Any) -> None:
    """Record a dated fact (an episode) about this checkout; get_answer returns it when relevant.

    At most 2,000 characters: record the fact, not the evidence."""
    from sourcebook.cli.tools import run_tool

    episode = run_tool("remember", root, values)["episode"]
    where = episode["scope"] or "the whole repository"
    click.echo(f"remembered [{episode['recorded_at']}] for {where}: {episode['text']}")


COMMANDS = [ask_command, remember_command]
