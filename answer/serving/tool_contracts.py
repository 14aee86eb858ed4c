"""Every agent tool declared once: its request model, its response model and its description.

The MCP tool schemas (answer/serving/mcp_server.py), the HTTP routes and their OpenAPI schema
(answer/serving/http_api.py) and
the CLI options (sourcebook/cli/tools.py, sourcebook/cli/answer.py,
sourcebook/cli/search.py) are generated from these models, so a
default, a bound or a description changes in one place and every surface agrees
(tests/integration/test_tool_surfaces.py checks it through a real MCP client, a real HTTP server and the CLI
in a subprocess). A new tool is one ToolSpec in TOOLS plus its method on answer.serving.tools.Tools.

The implementation (Tools) still returns plain JSON-ready dicts; the response models state their shape for
OpenAPI and for agents, and the surface test validates real replies against them (extra keys are errors).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from answer.answering.episodes import MAX_EPISODE_CHARS
from answer.answering.response import AnswerResponse, Episode
from answer.retrieval.packing import DEFAULT_BUDGET_TOKENS
from answer.serving.pushes import MAX_COMMIT_CHARS, MAX_PATH_CHARS
from sourcebook.errors import SourcebookError, UsageError

SearchType = Literal["hybrid", "lexical", "symbolic", "semantic", "regex"]
SEARCH_LIMIT_MAX = 100

# Every string a tool takes is capped (stated in the MCP and OpenAPI schemas, enforced by `ToolSpec.parse` on
# every surface): what one request makes the server scan is bounded by these, not by the body limit alone.
MAX_QUESTION_CHARS = 10_000  # a question with a pasted traceback fits
MAX_QUERY_CHARS = 4_000
MAX_PATH_ARG_CHARS = MAX_PATH_CHARS + 76  # a path plus ':START-END'
MAX_NAME_CHARS = 1_000
MAX_REPO_CHARS = 256
MAX_FLAG_CHARS = 64
MAX_TARGETS = 200
MAX_INDEX_PATHS = 20_000
MAX_CONTENT_CHARS = 64_000_000  # base64 of a 48 MB file; the organisation's max_file_bytes is the real cap
PathArg = Annotated[str, Field(max_length=MAX_PATH_ARG_CHARS)]
Flag = Annotated[str, Field(max_length=MAX_FLAG_CHARS)]

_REPO = "Repository alias in a workspace (default: the workspace's default repository)."
_SCOPE = "Path prefix to restrict to, e.g. 'src/pkg'."


class ToolRequest(BaseModel):
    """Base of the request models: unknown arguments are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ToolReply(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- requests


class GetAnswerRequest(ToolRequest):
    question: str = Field(max_length=MAX_QUESTION_CHARS, description="The question about the code base.")
    scope: str | None = Field(None, max_length=MAX_PATH_ARG_CHARS, description=_SCOPE)
    repo: str | None = Field(None, max_length=MAX_REPO_CHARS, description=_REPO)
    include: list[Flag] = Field([], max_length=10, description=(
        "Extra sections: 'evidence' (a wider evidence budget), 'diagnostics' (retrieval_quality)."))


class SearchRequest(ToolRequest):
    query: str = Field(max_length=MAX_QUERY_CHARS,
                       description="What to look for (words, identifiers, or a regex for type=regex).")
    type: SearchType = Field("hybrid", description=(
        "hybrid fuses all tiers; lexical = full text, symbolic = symbol names, semantic = vectors, "
        "regex = a Python regular expression over indexed code."))
    scope: str | None = Field(None, max_length=MAX_PATH_ARG_CHARS, description=_SCOPE)
    limit: int = Field(10, ge=1, le=SEARCH_LIMIT_MAX, description="How many files and spans to return.")
    repo: str | None = Field(None, max_length=MAX_REPO_CHARS, description=_REPO)


class ContextRequest(ToolRequest):
    query: str | None = Field(None, max_length=MAX_QUERY_CHARS,
                              description="Search for the seeds (optional when targets are given).")
    targets: list[PathArg] = Field([], max_length=MAX_TARGETS,
                                   description="Paths, 'path:START-END' ranges or symbol names.")
    budget_tokens: int = Field(DEFAULT_BUDGET_TOKENS, ge=1,
                               description="Token budget; tokens = ceil(characters / 4) per span.")
    scope: str | None = Field(None, max_length=MAX_PATH_ARG_CHARS, description=_SCOPE)
    repo: str | None = Field(None, max_length=MAX_REPO_CHARS, description=_REPO)


class SymbolRequest(ToolRequest):
    name: str = Field(max_length=MAX_NAME_CHARS,
                      description="'route', 'Flask.route', 'flask.app.Flask.route' or 'path::Qual.name'.")
    path: str | None = Field(None, max_length=MAX_PATH_ARG_CHARS,
                             description="Only definitions in this file.")
    repo: str | None = Field(None, max_length=MAX_REPO_CHARS, description=_REPO)


class ReadFileRequest(ToolRequest):
    path: str = Field(max_length=MAX_PATH_ARG_CHARS,
                      description="Repository-relative path of an indexed file.")
    start_line: int | None = Field(None, ge=1, description="First line (1-based; default 1).")
    end_line: int | None = Field(None, ge=1, description="Last line (default: the end of the file).")
    repo: str | None = Field(None, max_length=MAX_REPO_CHARS, description=_REPO)


class StructureRequest(ToolRequest):
    scope: str | None = Field(None, max_length=MAX_PATH_ARG_CHARS, description=_SCOPE)
    repo: str | None = Field(None, max_length=MAX_REPO_CHARS, description=_REPO)


class PushedFile(ToolRequest):
    path: str = Field(max_length=MAX_PATH_ARG_CHARS,
                      description="Repository-relative POSIX path (no '..', no leading '/', no drive "
                                  "letter).")
    content: str = Field(max_length=MAX_CONTENT_CHARS, description="The file's content, as text or base64.")
    encoding: Literal["utf-8", "base64"] = Field("utf-8", description="How `content` is encoded.")


class IndexRequest(ToolRequest):
    paths: list[PathArg] = Field([], max_length=MAX_INDEX_PATHS,
                                 description="Files or directories to (re)index; none = the whole tree.")
    prune: bool = Field(False, description="Delete indexed files absent from the request.")
    reset: bool = Field(False, description="Allow a prune even when this checkout is not the one the index "
                                           "was built from (otherwise refused with 409, nothing deleted).")
    repo: str | None = Field(None, max_length=MAX_REPO_CHARS, description=_REPO)
    files: list[PushedFile] | None = Field(None, description=(
        "Files pushed by the client (a server with no checkout): written to the repository's index, "
        "unchanged content hashes skipped; with prune, a full sync. Instead of `paths`."))
    commit: str | None = Field(None, max_length=MAX_COMMIT_CHARS, description=(
        "With `files`: the commit the pushed tree is (a SHA or tag), recorded with the index and reported "
        "by structure, read_file, get_symbol and get_context."))


class RememberRequest(ToolRequest):
    text: str = Field(max_length=MAX_EPISODE_CHARS,
                      description=f"The fact, at most {MAX_EPISODE_CHARS:,} characters.")
    scope: str | None = Field(None, max_length=MAX_PATH_ARG_CHARS,
                              description="Path prefix the fact is about (default: the whole repository).")
    repo: str | None = Field(None, max_length=MAX_REPO_CHARS, description=_REPO)


# ---------------------------------------------------------------- replies


class FileScore(ToolReply):
    path: str
    score: float
    tiers: list[str]


class SpanScore(ToolReply):
    path: str
    start_line: int
    end_line: int
    score: float
    tiers: list[str]
    snippet: str
    symbol: str = ""
    source: str = "chunk"


class SearchReply(ToolReply):
    query: str
    type: str
    scope: str | None
    repo: str
    files: list[FileScore]
    hits: list[SpanScore]
    degraded: bool
    notes: list[str]
    seconds: float | None = None
    cached: bool | None = None


class ContextSpan(ToolReply):
    path: str
    start_line: int
    end_line: int
    reason: str
    score: float
    symbol: str
    via: str
    text: str
    tokens: int
    truncated: bool


class ContextReply(ToolReply):
    query: str | None
    targets: list[str]
    repo: str
    commit: str | None = None  # the commit the index describes, when the build recorded one
    scope: str | None
    budget_tokens: int
    used_tokens: int
    counting_rule: str
    skipped: int
    missing: list[str]
    spans: list[ContextSpan]
    degraded: bool
    notes: list[str]


class SymbolRef(ToolReply):
    path: str
    qualname: str


class SymbolDefinition(ToolReply):
    qualname: str
    name: str
    kind: str
    path: str
    start_line: int
    end_line: int
    signature: str
    docstring: str
    match: Literal["qualname", "module", "suffix", "name"]
    body: str | None = None
    body_start_line: int | None = None
    body_end_line: int | None = None
    verified: bool | None = None
    changed_since_index: bool | None = None
    truncated: bool | None = None
    note: str | None = None
    callers: list[SymbolRef] | None = None
    callees: list[SymbolRef] | None = None


class SymbolReply(ToolReply):
    name: str
    repo: str
    commit: str | None = None  # the commit the index describes, when the build recorded one
    definitions: list[SymbolDefinition]
    # an index outage (issue 23: 200 with degraded, never 5xx nor "not indexed"): set only then
    degraded: bool | None = None
    notes: list[str] | None = None


class ReadFileReply(ToolReply):
    path: str
    repo: str
    commit: str | None = None  # the commit the index describes, when the build recorded one
    language: str
    sha: str | None
    start_line: int
    end_line: int
    total_lines: int
    content: str
    truncated: bool
    # an index outage (issue 23: 200 with degraded, never 5xx nor "not indexed"): set only then
    degraded: bool | None = None
    notes: list[str] | None = None


class TreeNode(ToolReply):
    name: str
    path: str
    type: Literal["dir", "file"]
    symbols: int
    files: int | None = None  # directories
    children: list[TreeNode] | None = None  # directories (absent when folded by `structure --depth`)
    language: str | None = None  # files
    kind: str | None = None
    lines: int | None = None


class StructureReply(ToolReply):
    repo: str
    commit: str | None = None  # the commit the index describes, when the build recorded one
    scope: str | None
    indexed: bool
    files: int
    symbols: int
    tree: TreeNode
    # an index outage (issue 23: 200 with degraded, never 5xx nor "not indexed"): set only then
    degraded: bool | None = None
    notes: list[str] | None = None


class SkippedFile(ToolReply):
    path: str
    reason: str


class PushCounts(ToolReply):
    indexed: int
    unchanged: int
    deleted: int
    skipped: int


class IndexReply(ToolReply):
    repo: str
    prune: bool
    reset: bool
    requested: list[str]
    report: dict[str, Any]  # generator.index.report.IndexReport as a dict (owned by the build side)
    removed: list[str]
    not_found: list[str]
    skipped: list[SkippedFile]
    pushed: PushCounts | None = None  # a push of files (`files`): what it did
    commit: str | None = None  # a push of files: the commit the index now records ("" or None: unknown)


class RememberReply(ToolReply):
    repo: str
    episode: Episode


# ---------------------------------------------------------------- the registry


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what MCP, HTTP and the CLI are generated from.

    `http_get` / `http_post`: which methods the route answers (GET takes query parameters, lists
    comma-separated; POST takes a JSON body, whose fields beat the query string's). `http_aliases`: extra
    query/body names for a field (`q` for the question), HTTP only, kept for short URLs."""

    name: str  # the MCP tool name and the Tools method
    request: type[ToolRequest]
    reply: type[BaseModel]
    description: str
    http_path: str
    http_summary: str
    http_get: bool = True
    http_post: bool = False
    http_aliases: Mapping[str, str] = field(default_factory=dict)
    body_only: frozenset[str] = frozenset()  # fields no query string can carry (lists of objects)

    def parse(self, data: Mapping[str, Any]) -> ToolRequest:
        """The validated request, or a UsageError naming every bad argument on one line."""
        # a lone surrogate (JSON's "\\ud800") is no text: it cannot be written to an episode file, a prompt
        # or a log line, and failed there as a 500 with a traceback
        unencodable = [name for name, value in data.items() if _unencodable(value)]
        if unencodable:
            raise UsageError(f"{self.name}: {', '.join(unencodable)}: not valid Unicode text "
                             "(a lone surrogate)")
        try:
            return self.request.model_validate(dict(data))
        except ValidationError as exc:
            problems = [f"{'.'.join(str(p) for p in err['loc']) or 'request'}: {err['msg']}"
                        for err in exc.errors()]
            raise UsageError(f"{self.name}: " + "; ".join(problems)) from None

    def invoke(self, tools: Any, request: ToolRequest) -> dict[str, Any]:
        """Run the tool: Tools.<name>(**fields). Tools methods take the request's fields by name. The
        server's own folders (`tools.hidden_roots`) are taken out of an error's message and the notes."""
        hidden: tuple[str, ...] = getattr(tools, "hidden_roots", ())
        try:
            result: dict[str, Any] = getattr(tools, self.name)(**request.model_dump())
        except SourcebookError as exc:
            hide_roots(exc, hidden)
            raise
        if hidden and isinstance(result.get("notes"), list):
            result["notes"] = [_hidden(n, hidden) if isinstance(n, str) else n for n in result["notes"]]
        return result


HIDDEN_ROOT = "<index root>"


def _hidden(text: str, roots: tuple[str, ...]) -> str:
    for root in roots:
        text = text.replace(root, HIDDEN_ROOT)
    return text


def hide_roots(exc: SourcebookError, roots: tuple[str, ...]) -> None:
    """Take `roots` (an organisation's index root: where the server keeps its data) out of `exc`'s message
    and problems, in place: a tenant learns its repository's name, never the server's folders."""
    if not roots:
        return
    exc.args = tuple(_hidden(a, roots) if isinstance(a, str) else a for a in exc.args)
    problems = getattr(exc, "problems", None)
    if isinstance(problems, list):
        exc.problems = [_hidden(p, roots) if isinstance(p, str) else p  # type: ignore[attr-defined]
                        for p in problems]


def _unencodable(value: Any) -> bool:
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, list | tuple):
        return any(_unencodable(item) for item in value)
    return False


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "get_answer", GetAnswerRequest, AnswerResponse,
        "Call this FIRST for any question about the code (how does X work, where is Y handled, why does Z "
        "happen). Returns one object: answer with inline file citations, confidence (high/medium/low, graded "
        "by checks), fallback_targets and candidates to verify, symbol_bodies when the answer names a "
        "function or class. If 'degraded' is present, no answer was synthesized: use the ranked evidence. "
        "scope = path prefix; include = ['evidence'] for a wider evidence budget, ['diagnostics'] for "
        "retrieval_quality.",
        "/ask", "get_answer: a cited answer with graded confidence (call this first)",
        http_post=True, http_aliases={"q": "question", "query": "question"}),
    ToolSpec(
        "search_codebase", SearchRequest, SearchReply,
        "Ranked files and code spans for a query, when you want to look yourself rather than get an answer. "
        "type: hybrid (default, fuses all tiers), lexical (full-text over code and docs), symbolic (symbol "
        "names), semantic (vectors), regex (a Python regular expression over indexed code). A retrieval "
        "outage returns an empty result with degraded=true instead of failing.",
        "/search", "search_codebase: ranked files and spans (lexical/symbolic/semantic/hybrid/regex)",
        http_post=True, http_aliases={"q": "query"}),
    ToolSpec(
        "get_context", ContextRequest, ContextReply,
        "Pack the most relevant code into a token budget, ready to read: for a query (search seeds) or for "
        "explicit targets (paths, 'path:START-END' ranges, symbol names), plus the definitions those call "
        "and their key callers. Use it to verify get_answer's fallback_targets or before editing. Tokens are "
        "counted as ceil(characters/4) per span; the budget is never exceeded and the top match is always "
        "included (truncated if needed).",
        "/context", "get_context: the most relevant code packed into a token budget",
        http_post=True, http_aliases={"q": "query"}),
    ToolSpec(
        "get_symbol", SymbolRequest, SymbolReply,
        "Look up a function, class or method by name ('route', 'Flask.route', 'flask.app.Flask.route' or "
        "'src/flask/app.py::Flask.route'): every definition with signature, docstring, its live body read "
        "from disk with verified line bounds, and its callers and callees.",
        "/symbol", "get_symbol: definitions, signature, docstring, live body, callers/callees"),
    ToolSpec(
        "read_file", ReadFileRequest, ReadFileReply,
        "The indexed content of one file by repository-relative path, optionally a line range. A file that "
        "is not indexed is 'not found' (distinct from an empty file); paths outside the repository are "
        "refused. Prefer get_context when you only need the relevant parts.",
        "/file", "read_file: the indexed content of one file (404 when not indexed)"),
    ToolSpec(
        "get_repo_structure", StructureRequest, StructureReply,
        "The indexed file tree with a symbol count per file and per directory, optionally under a path "
        "prefix. Use it to orient in an unfamiliar repository. An unindexed repository is an empty tree.",
        "/structure", "get_repo_structure: file tree with symbol counts"),
    ToolSpec(
        "index", IndexRequest, IndexReply,
        "(Re)index files after you change them, so later answers and searches see the edits. Give paths "
        "(files or directories) or nothing for the whole tree; unchanged files are skipped by content hash. "
        "prune=true deletes indexed files absent from the request (a full sync when no paths are given). "
        "A prune from another checkout than the index's (another remote or folder, or no files) is refused "
        "(IndexSourceError, nothing deleted) unless reset=true.",
        "/index", "index: incremental (re)index of given paths or the whole tree, or pushed files",
        http_get=False, http_post=True, body_only=frozenset({"files"})),
    ToolSpec(
        "remember", RememberRequest, RememberReply,
        "Record a dated fact about this checkout (e.g. 'the payments tests need Redis running'), scoped to "
        "a path prefix. get_answer returns it to later callers whose answers touch that scope. At most "
        f"{MAX_EPISODE_CHARS:,} characters: record the fact, not the evidence.",
        "/remember", "remember: record a dated fact (episode) about this checkout",
        http_get=False, http_post=True),
)

BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
