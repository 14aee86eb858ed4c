"""One build's use of the LLM: choosing the writer, the dry-run cost estimate, and the end-of-run ledger.

Kept out of the CLI module so that `sourcebook build` stays a thin shell: it asks `writer_from_config` for
the writer (None means extractive prose), `estimate_run` for `--dry-run`, and `finish_run` for the summary
line and the saved ledger.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from generator.analyze.manifests import project_description, project_name
from generator.pages.llm.writer import LLMWriter
from generator.pages.model_writer import ModelWriter
from generator.pages.writer import PageWriter
from sourcebook.config import Config

log = logging.getLogger(__name__)


def writer_from_config(config: Config, *, max_pages: int | None = None,
                       max_cost: float | None = None) -> LLMWriter | None:
    """The LLM writer when a provider is configured (SOURCEBOOK_LLM_* / OPENAI_* / config file), else None."""
    from sourcebook.provider import get_chat_model

    chat = get_chat_model(config.llm)
    if chat is None:
        return None
    return LLMWriter(chat, repo_name=project_name(config.root, config.site_name),
                     concurrency=config.llm.concurrency, max_pages=max_pages, max_cost=max_cost)


@dataclass
class RunEstimate:
    """What a build would cost before anything is spent (`sourcebook build --dry-run`)."""

    writer_id: str
    pages: dict[str, int] = field(default_factory=dict)  # kind -> stale pages the LLM would write
    extractive_pages: int = 0  # stale pages written without the model (docs, secrets, empty files)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    stale: list[str] = field(default_factory=list)
    # The small-model path on top (writer.estimate_alone): a page whose whole draft fails is asked section
    # by section and symbol by symbol. A weak model pays it on most pages, a strong one on none.
    alone_calls: int = 0
    alone_input_tokens: int = 0
    alone_output_tokens: int = 0
    alone_cost: float = 0.0

    @property
    def max_calls(self) -> int:
        return self.calls + self.alone_calls

    def format(self) -> str:
        kinds = ", ".join(f"{n} {kind}" for kind, n in self.pages.items() if n) or "none"
        line = (f"Dry run ({self.writer_id}): {len(self.stale)} stale pages; LLM pages to write: {kinds}"
                f" ({self.extractive_pages} more without the model); about {self.calls} calls, "
                f"{self.input_tokens:,} input + {self.output_tokens:,} output tokens, est. ${self.cost:.4f}")
        if self.alone_calls:
            tokens_in = self.input_tokens + self.alone_input_tokens
            line += (f"; up to {self.max_calls} calls, {tokens_in:,} input + "
                     f"{self.output_tokens + self.alone_output_tokens:,} output tokens, est. "
                     f"${self.cost + self.alone_cost:.4f} if every page's sections are asked one at a time "
                     "(a small model)")
        return line


def estimate_run(config: Config, writer: LLMWriter) -> RunEstimate:
    """Plan the build and estimate each stale page's LLM calls and tokens, writing and calling nothing.

    Module and overview pages are estimated from the summaries of the last run (their children's new
    summaries do not exist yet), which is close because summaries are short.
    """
    from generator.analyze.analysis import analyze
    from generator.analyze.plan import OVERVIEW_ID, load_state, retry_due
    from generator.analyze.scan import decode, read_source
    from generator.build import check_stale, shared_cache
    from generator.pages.contexts import file_context, module_context, overview_context
    from generator.pages.overview_stage import root_readme
    from generator.pages.stages import module_readme
    from sourcebook.errors import SourcebookError

    # the same analysis `build` and `build --check` make, so all three agree on what is stale
    analysis = analyze(config, save_cache=False)
    facts, texts, plan, graph = analysis.facts, analysis.texts, analysis.plan, analysis.graph
    state = load_state(config.out_dir)
    stale = set(check_stale(config, analysis, state=state, writer=writer, shared=shared_cache(config)))
    stale.update(pid for pid in plan.all_ids if retry_due(pid, state))  # fallbacks whose backoff ran out
    est = RunEstimate(writer_id=writer.id, pages={"file": 0, "module": 0, "overview": 0, "topic": 0},
                      stale=sorted(stale))

    def add(kind: str, estimate: tuple[int, int, int], alone: tuple[int, int, int] = (0, 0, 0)) -> None:
        calls, tokens_in, tokens_out = estimate
        if calls:
            est.pages[kind] += 1
        else:
            est.extractive_pages += 1
        est.calls += calls
        est.input_tokens += tokens_in
        est.output_tokens += tokens_out
        est.alone_calls += alone[0]
        est.alone_input_tokens += alone[1]
        est.alone_output_tokens += alone[2]

    def page(kind: str, ctx: Any) -> None:
        add(kind, writer.estimate(ctx), writer.estimate_alone(ctx))

    for path in sorted(facts):
        ctx = file_context(facts[path], plan, graph)
        if ctx.page_id not in stale:
            continue
        text = texts.get(path)
        if text is None:
            try:
                text = decode(read_source(config.root, path))
            except SourcebookError:
                text = ""
        page("file", dataclasses.replace(ctx, source=text))
    summaries = {p: (state[pid].summary if pid in state else "") for p, pid in plan.files.items()}
    summaries.update({d + "/": (state[pid].summary if pid in state else "")
                      for d, pid in plan.modules.items()})
    root_name = project_name(config.root)
    for directory, page_id in plan.modules.items():
        if page_id in stale:
            readme = module_readme(config, plan, directory)[1] if directory else ""
            page("module", module_context(directory, plan, facts, graph, summaries=summaries, readme=readme,
                                          root_name=root_name))
    if OVERVIEW_ID in stale:
        from generator.pages.orientation import build_folders

        readme_path, readme = root_readme(config, plan)
        page("overview", overview_context(
            project_name(config.root, config.site_name), plan, facts, graph, summaries=summaries,
            readme=readme, readme_path=readme_path, skipped_count=len(analysis.skipped),
            description=project_description(config.root), build=build_folders(config.root)))
    from generator.pages.llm.drafts import LLMTopicDraft, TopicPartOnly
    from generator.pages.llm.topics import TOPIC_OUTPUT_TOKENS, estimate_alone, topic_prompt
    from generator.pages.topic_stage import topic_contexts
    from generator.pages.topics import excerpts
    from sourcebook.provider import estimate_prompt_tokens

    def text_of(path: str) -> str:
        try:
            return texts.get(path) or decode(read_source(config.root, path))
        except SourcebookError:
            return ""

    for topic in topic_contexts(config, plan, facts, graph, summaries):
        if topic.page_id in stale:
            filled = dataclasses.replace(topic, excerpts=excerpts(topic, text_of))
            prompt = topic_prompt(filled, writer.prompt_chars(LLMTopicDraft))
            add("topic", (1, estimate_prompt_tokens([{"role": "user", "content": prompt}], LLMTopicDraft),
                          TOPIC_OUTPUT_TOKENS), estimate_alone(filled, writer.prompt_chars(TopicPartOnly)))
    est.cost = writer.chat.ledger.cost(est.input_tokens, est.output_tokens)
    est.alone_cost = writer.chat.ledger.cost(est.alone_input_tokens, est.alone_output_tokens)
    return est


def dry_run(config: Config, writer: PageWriter) -> str:
    """What `build --dry-run` prints: the estimate of the model's calls and cost, or for a writer that
    calls no model the stale pages alone."""
    if not isinstance(writer, LLMWriter):  # only the LLM writer can estimate its calls (llm/estimate.py)
        from generator.build import build

        report = build(config, writer=writer, check=True, site=False, index=False)
        return (f"Dry run ({writer.id}, no LLM provider configured): {len(report.stale)} stale pages, "
                "0 LLM calls, $0")
    return estimate_run(config, writer).format()


def finish_run(config: Config, writer: ModelWriter) -> str:
    """Save the run's ledger under `<out_dir>/ledger/` and return the line to print."""
    ledger = writer.ledger
    line = ledger.format()
    if writer.stop_reason:
        line += f"; stopped calling the model: {writer.stop_reason} (remaining pages retried next run)"
    if ledger.entries:
        saved = ledger.save(config.out_dir)
        line += f"; ledger: {saved}"
    return line
