"""The LLM path end to end on a real repository, through the CLI, as a user runs it: flask's pinned sdist
(tests/support/real_repos.py) with the scripted provider on 127.0.0.1, at the default number of processes and
at 2 and 4 forced, with the provider behaving well and badly, into a local index and into the moto S3 server;
a no-change rerun asks nothing; a build stopped by SIGTERM in the middle of the files stage, then rebuilt,
equals a clean build.

Why flask and not requests: the files stage forks its workers only from 2 x 32 pages to write
(sourcebook/workers.py, MIN_ITEMS_PER_PROCESS), and requests' sdist has 52 file pages, so it never fans out.
flask's has 206: one forked worker at 2 processes, three at 4, while the provider's threads are asking.

Every build is a subprocess with its own process group and a deadline: a build that hangs fails its test
(with the calls it made and its last output) instead of hanging the suite, and whatever it left running is
killed with its group.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from generator.analyze.plan import load_state
from generator.index.store import open_index
from sourcebook.config import load_config
from tests.support.fake_llm import FakeLLM, Reply, page_writer_responder
from tests.support.object_store import MotoS3
from tests.support.real_repos import REPO_ROOT

pytestmark = pytest.mark.slow

# A build is hung when it shows no sign of life (output, a chat or an embedding request) for STALL_S, or
# is not done after BUILD_TIMEOUT_S; a clean build takes 10-45 s on 2 cores, busy or not.
STALL_S = 60.0
BUILD_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 30.0  # SIGTERM to exit
LLM_TIMEOUT_S = 2.0  # the client's timeout: a slow reply past it is retried
SLOW_PAST_TIMEOUT_S = LLM_TIMEOUT_S + 1.5
INDEX_TABLES = ("files", "chunks", "symbols", "pages")
INVENTED = ("invented_helper_xyz", "InventedClass.invented_method", "invented_function_abc",
            "src/invented/nowhere.py")
RESIDUE = "<|im_end|>"


@dataclass
class Run:
    returncode: int
    output: str  # stdout and stderr
    took: float
    calls: int  # chat calls the fake answered during the run
    embedded: list[str]  # the texts of the embedding requests during the run


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _env(fake: FakeLLM, workers: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    env.update({"PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p),
                "SOURCEBOOK_LLM_BASE_URL": fake.base_url, "SOURCEBOOK_LLM_MODEL": "fake",
                "SOURCEBOOK_LLM_TIMEOUT": str(LLM_TIMEOUT_S),
                # embeddings from the same fake: deterministic vectors, and its calls are counted too
                "SOURCEBOOK_EMBEDDER": "openai", "SOURCEBOOK_EMBED_BASE_URL": fake.base_url,
                "SOURCEBOOK_EMBED_MODEL": "fake-embed"})
    if workers is not None:
        env["SOURCEBOOK_SITE_WORKERS"] = workers
    return env


def _start(repo: Path, out: Path, fake: FakeLLM, workers: str | None, *args: str) -> tuple[
        subprocess.Popen[bytes], Path]:
    log = out.with_name(out.name + ".log")
    with log.open("wb") as sink:  # a file, not a pipe: a worker left behind cannot hold the reader up
        # no site: the LLM path ends at the pages and the index (the browser tests build flask's site)
        # -v: the workers' INFO lines say whether and how wide each stage fanned out
        cmd = [sys.executable, "-m", "sourcebook.cli", "-v", "build", str(repo), "--out", str(out),
               "--no-site", *args]
        proc = subprocess.Popen(cmd, env=_env(fake, workers), stdout=sink, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return proc, log


def build(repo: Path, out: Path, fake: FakeLLM, *args: str, workers: str | None = None,
          timeout: float = BUILD_TIMEOUT_S) -> Run:
    """`sourcebook build repo --out out *args` in a subprocess; fails the test unless it exits in time."""
    calls, embeddings = fake.calls, len(fake.embedding_requests)
    started = time.monotonic()
    proc, log = _start(repo, out, fake, workers, *args)
    try:
        hung = _wait_alive(proc, log, fake, started + timeout)
        if hung:
            _kill_group(proc)
            proc.wait()
            tail = log.read_text(errors="replace")[-2000:]
            pytest.fail(f"sourcebook build (workers={workers or 'default'}) hung: {hung}, "
                        f"{fake.calls - calls} LLM calls made; its last output:\n{tail}", pytrace=False)
    finally:
        _kill_group(proc)  # any worker it left behind
    inputs = [body.get("input") or [] for body in fake.embedding_requests[embeddings:]]
    return Run(proc.returncode, log.read_text(errors="replace"), time.monotonic() - started,
               fake.calls - calls, [t for i in inputs for t in ([i] if isinstance(i, str) else i)])


def _wait_alive(proc: subprocess.Popen[bytes], log: Path, fake: FakeLLM, deadline: float) -> str:
    """Wait for `proc` to exit; "" when it did, else why it is taken for hung."""
    seen: tuple[int, int, int] | None = None
    last_sign = time.monotonic()
    while True:
        try:
            proc.wait(timeout=0.5)
            return ""
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        sign = (log.stat().st_size, fake.calls, len(fake.embedding_requests))
        if sign != seen:
            seen, last_sign = sign, now
        if now - last_sign > STALL_S:
            return f"no output and no request for {STALL_S:.0f} s"
        if now > deadline:
            return "still running at the deadline"


def docs_bytes(out: Path) -> dict[str, bytes]:
    docs = out / "docs"
    return {p.relative_to(docs).as_posix(): p.read_bytes() for p in sorted(docs.rglob("*")) if p.is_file()}


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value


def index_rows(repo: Path, *, out: Path | None = None, uri: str = "") -> dict[str, set[Any]]:
    """Every row of the index's tables (vectors included), as sets, read the way a server reads it."""
    overrides: dict[str, Any] = {"index_uri": uri} if uri else {"out_dir": str(out)}
    config = load_config(repo, overrides=overrides, env={**os.environ, "SOURCEBOOK_EMBEDDER": "none"})
    store = open_index(config, embedder=None)
    return {name: {_frozen(row) for row in store.table(name).to_arrow().to_pylist()} for name in INDEX_TABLES}


def by_model(out: Path) -> set[str]:
    return {pid for pid, row in load_state(out).items() if row.written_by == "llm"}


def files_stage_processes(output: str) -> int:
    """How many processes wrote the file pages, from the workers' log line in the files stage (between the
    planning's progress line and the file pages' one); 1 when it did not fan out."""
    stage = output.split("\nPlanning pages:", 1)[-1].split("\nWriting file pages:", 1)[0]
    spread = re.findall(r"spreading the work over (\d+) processes", stage)
    return int(spread[-1]) if spread else 1


def _succeeded(run: Run, what: str) -> None:
    assert run.returncode == 0, f"{what}: exit {run.returncode}\n{run.output[-3000:]}"
    # the traceback itself, whole, not the log's tail: a worker's traceback can be followed by pages of log
    at = run.output.find("Traceback")
    assert at < 0, run.output[max(0, at - 500):at + 6000]


# -- the provider, behaving badly ----------------------------------------------------------------------------


def _each_string(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_each_string(v, change) for v in value]
    if isinstance(value, dict):
        return {k: _each_string(v, change) for k, v in value.items()}
    return value


def _invented(payload: dict[str, Any]) -> dict[str, Any]:
    """The scripted draft, naming things no file holds: in the summary (a required field: re-asked) and in
    the optional lists (dropped)."""
    out = dict(payload)
    out["summary"] = f"{payload.get('summary', '')} It hands its work to `{INVENTED[0]}` in `{INVENTED[3]}`."
    if "key_symbols" in out:
        out["key_symbols"] = [*out["key_symbols"], {"qualname": INVENTED[1], "explanation": "A made-up one."}]
    if "docstrings" in out:
        out["docstrings"] = [*out["docstrings"], {"qualname": INVENTED[2], "explanation": "Not there."}]
    for field in ("key_items", "key_modules"):
        if field in out:
            out[field] = [*out[field], {"path": INVENTED[3], "explanation": "A path that does not exist."}]
    return out


class Misbehaving:
    """The scripted page writer, except that calls in turn get an HTTP 500, JSON and end-of-turn residue
    around every string, invented names, a reply that is not JSON, a slow reply, and twice a reply slower
    than the client's timeout."""

    # one call in three misbehaves (more, and the re-asks and retries multiply the calls past the point)
    KINDS = ("good", "500", "good", "residue", "good", "invented", "good", "malformed", "good", "slow",
             "good", "good")
    PAST_TIMEOUT = frozenset({17, 101})

    def __init__(self) -> None:
        self._count = itertools.count()
        self._lock = threading.Lock()
        self.served = dict.fromkeys((*self.KINDS, "past timeout"), 0)  # the kinds actually sent

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            n = next(self._count)
        good = page_writer_responder(body)
        kind = "past timeout" if n in self.PAST_TIMEOUT else self.KINDS[n % len(self.KINDS)]
        with self._lock:
            self.served[kind] += 1
        if kind == "500":
            return Reply.status(500)
        if kind == "residue":
            return replace(good, payload=_each_string(good.payload, lambda s: f'{s}{RESIDUE}",' if s else s))
        if kind == "invented":
            return replace(good, payload=_invented(good.payload))
        if kind == "malformed":
            return Reply.malformed()
        if kind == "slow":
            return replace(good, delay_s=0.3)
        if kind == "past timeout":
            return replace(good, delay_s=SLOW_PAST_TIMEOUT_S)
        return good


# -- fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture
def quick_retries(_isolated_user_config: Path) -> None:
    """The user's config (the test's own $XDG_CONFIG_HOME): transport retries after 50 ms, not 1 s."""
    (_isolated_user_config / "sourcebook").mkdir(parents=True, exist_ok=True)
    (_isolated_user_config / "sourcebook" / "config.toml").write_text("[llm]\nretry_base_s = 0.05\n",
                                                                      encoding="utf-8")


@dataclass
class Reference:
    """The clean build every other build is compared with: default processes, a well-behaved provider,
    local index."""

    out: Path
    run: Run
    docs: dict[str, bytes]
    rows: dict[str, set[Any]]
    model_pages: set[str]


@pytest.fixture(scope="module")
def reference_fake() -> Iterator[FakeLLM]:
    with FakeLLM(responder=page_writer_responder) as server:
        yield server


@pytest.fixture(scope="module")
def reference(flask_repo: Path, reference_fake: FakeLLM, tmp_path_factory: pytest.TempPathFactory,
              _one_user_state: Path) -> Reference:
    with pytest.MonkeyPatch.context() as patch:
        home = tmp_path_factory.mktemp("reference-config")
        patch.setenv("XDG_CONFIG_HOME", str(home))
        out = tmp_path_factory.mktemp("reference") / "out"
        run = build(flask_repo, out, reference_fake)
    print(f"reference build: {run.took:.1f} s, {run.calls} calls")
    _succeeded(run, "the clean build at the default processes")
    return Reference(out, run, docs_bytes(out), index_rows(flask_repo, out=out), by_model(out))


# -- the tests -----------------------------------------------------------------------------------------------


def test_default_processes_build_then_a_no_change_rerun_asks_nothing(flask_repo: Path, reference: Reference,
                                                                     reference_fake: FakeLLM) -> None:
    state = load_state(reference.out)
    code_pages = {pid for pid in state if pid.startswith("files/src/flask/") and pid.endswith(".py.md")}
    assert len(code_pages) >= 20
    if len(os.sched_getaffinity(0)) > 1:  # the default is the usable CPUs: the files stage fanned out
        assert files_stage_processes(reference.run.output) > 1, reference.run.output[-3000:]
    assert code_pages <= reference.model_pages  # every module of flask, by the model
    assert "index.md" in reference.model_pages
    assert reference.run.calls >= len(reference.model_pages)
    assert len(reference.rows["files"]) >= 200
    assert {row for row in reference.rows["pages"] if dict(row)["written_by"] == "llm"}

    again = build(flask_repo, reference.out, reference_fake)
    _succeeded(again, "the no-change rerun")
    assert again.calls == 0  # nothing asked of the model
    # nor anything embedded: the embedder's one-word dimension probe is all that leaves
    assert set(again.embedded) <= {"dimension probe"}, again.embedded[:5]
    assert docs_bytes(reference.out) == reference.docs
    assert index_rows(flask_repo, out=reference.out) == reference.rows


# (processes, provider, index): each process count with both behaviours, each behaviour in both places
# (the default is the reference: well, local). The default on a 2-core machine, CI's, is 2.
MATRIX = [("2", "well", "s3"), ("4", "well", "local"), ("2", "badly", "local"), ("4", "badly", "s3")]


@pytest.mark.parametrize(("workers", "behaviour", "store"), MATRIX,
                         ids=[f"{w or 'default'}-{b}-{s}" for w, b, s in MATRIX])
def test_llm_build_at_any_parallelism_and_provider_behaviour(
        request: pytest.FixtureRequest, flask_repo: Path, fake_llm: FakeLLM, s3_env: MotoS3,
        quick_retries: None, tmp_path: Path, workers: str | None, behaviour: str, store: str) -> None:
    misbehaving = Misbehaving()
    fake_llm.responder = page_writer_responder if behaviour == "well" else misbehaving
    out = tmp_path / "out"
    uri = s3_env.bucket() + "/wiki" if store == "s3" else ""
    where = ["--index-uri", uri] if uri else []
    run = build(flask_repo, out, fake_llm, *where, workers=workers)
    _succeeded(run, f"the build at {workers or 'default'} processes, provider {behaviour}, index {store}")
    if uri:
        assert any(key.startswith("wiki/") for key in s3_env.objects(uri))
    else:  # 206 file pages: enough for 3 forked workers (32 a process); what the test is for
        assert files_stage_processes(run.output) == int(workers or 0), run.output[-3000:]
    rows = index_rows(flask_repo, out=out, uri=uri)
    docs = docs_bytes(out)
    reference: Reference = request.getfixturevalue("reference")  # after this build: its own failure first

    if behaviour == "well":  # the same wiki and index whatever the parallelism and wherever the index is
        assert docs.keys() == reference.docs.keys()
        assert [page for page in docs if docs[page] != reference.docs[page]] == []
        assert rows == reference.rows
        return

    assert all(misbehaving.served.values()), misbehaving.served  # every kind of bad reply was sent
    assert docs.keys() == reference.docs.keys()  # every page, whatever the provider did
    for page, raw in docs.items():
        text = raw.decode("utf-8", errors="replace")
        assert RESIDUE not in text, page
        assert not [name for name in INVENTED if name in text], page
    for row in rows["pages"]:
        assert not [name for name in INVENTED if name in str(row)]
    # retries and re-asks got most pages written by the model; the rest are marked for the next run
    model = by_model(out)
    assert len(model) >= 0.8 * len(reference.model_pages), (len(model), len(reference.model_pages))
    state = load_state(out)
    assert all(state[pid].retry for pid in reference.model_pages - model)


def _wait_for_calls(fake: FakeLLM, proc: subprocess.Popen[bytes], calls: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while fake.calls < calls:
        if proc.poll() is not None or time.monotonic() > deadline:
            return
        time.sleep(0.02)


def test_sigterm_in_the_files_stage_then_a_rebuild_equals_a_clean_build(
        request: pytest.FixtureRequest, flask_repo: Path, fake_llm: FakeLLM, tmp_path: Path) -> None:
    # slower than the reference's fake, so the files stage (about 110 calls, four at a time) lasts well
    # beyond the signal however loaded the machine is (at 0.05 s a call it could end before the signal)
    fake_llm.responder = lambda body: replace(page_writer_responder(body), delay_s=0.3)
    out = tmp_path / "out"
    proc, log = _start(flask_repo, out, fake_llm, "2")
    try:
        _wait_for_calls(fake_llm, proc, 40, BUILD_TIMEOUT_S)
        assert proc.poll() is None, f"the build ended before the signal:\n{log.read_text()[-3000:]}"
        stage = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("Writing")]
        assert not any("module pages" in line for line in stage), stage  # still writing file pages
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"SIGTERM did not stop the build within {STOP_TIMEOUT_S:.0f} s:\n"
                        f"{log.read_text(errors='replace')[-3000:]}", pytrace=False)
        assert proc.returncode != 0
        time.sleep(1.0)
        try:  # its forked workers went with it
            os.killpg(proc.pid, 0)
            left = True
        except ProcessLookupError:
            left = False
        assert not left, "processes of the stopped build are still running"
    finally:
        _kill_group(proc)

    fake_llm.responder = page_writer_responder
    rebuilt = build(flask_repo, out, fake_llm, workers="2")
    _succeeded(rebuilt, "the rebuild after SIGTERM")
    docs = docs_bytes(out)
    reference: Reference = request.getfixturevalue("reference")
    assert docs.keys() == reference.docs.keys()
    assert [page for page in docs if docs[page] != reference.docs[page]] == []
    assert index_rows(flask_repo, out=out) == reference.rows
    assert by_model(out) == reference.model_pages
