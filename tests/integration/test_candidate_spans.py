"""get_answer's `candidates` and `sourcebook eval`'s spans: the top file names its two best functions, the
next files one each, every cited range inside the symbol it names."""

from answer.answering.get_answer import AnswerContext, get_answer
from answer.answering.localize import locate
from answer.retrieval.evaluate import Outcome, Question, function_hit
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config

RETRY = '''"""Retrying failed requests with a backoff."""


class Retry:
    def __init__(self, total=3, backoff_factor=0.5):
        self.total = total
        self.backoff_factor = backoff_factor

    def get_backoff_time(self, attempt):
        """The backoff before the next retry: the factor doubled per consecutive attempt."""
        return self.backoff_factor * (2 ** (attempt - 1))

    def sleep_for_backoff(self, attempt):
        """Sleep the backoff time of this retry attempt."""
        delay = self.get_backoff_time(attempt)
        if delay > 0:
            time.sleep(delay)

    def is_exhausted(self):
        return self.total < 0
'''

POOL = '''"""Connection pools."""


class Pool:
    def urlopen(self, url, retries):
        """Open url, retrying with a backoff after a failed attempt."""
        while True:
            try:
                return self._make_request(url)
            except OSError:
                retries.sleep_for_backoff(1)

    def close(self):
        self.closed = True
'''

HEADERS = '''"""Header names."""


def canonical_header(name):
    return "-".join(part.capitalize() for part in name.split("-"))
'''


def _repo(make_repo):
    root = make_repo({"pkg/retry.py": RETRY, "pkg/pool.py": POOL, "pkg/headers.py": HEADERS})
    config = load_config(root)
    index_repository(config, embedder=None)
    return config


def test_candidates_name_the_top_files_two_best_functions_then_the_next_file(make_repo):
    config = _repo(make_repo)
    question = "How is the backoff time of a retry attempt computed before sleeping?"
    reply = get_answer(AnswerContext(config, chat=None), question)
    named = [(c.path, c.symbol) for c in reply.candidates]
    assert named[:2] == [("pkg/retry.py", "Retry.get_backoff_time"),
                         ("pkg/retry.py", "Retry.sleep_for_backoff")]
    assert ("pkg/pool.py", "Pool.urlopen") in named[2:]
    assert len(reply.candidates) <= 5
    # the reply's file ranking lists each file once, the top file first
    assert reply.ranked_files()[0] == "pkg/retry.py"
    assert len(reply.ranked_files()) == len(set(reply.ranked_files()))
    lines = {"Retry.get_backoff_time": (9, 11), "Retry.sleep_for_backoff": (13, 17), "Pool.urlopen": (5, 11)}
    for c in reply.candidates:
        if c.symbol in lines:
            low, high = lines[c.symbol]
            assert low <= c.lines[0] <= c.lines[1] <= high, c


def test_eval_counts_the_top_files_runner_up_as_a_function_hit(make_repo):
    config = _repo(make_repo)
    store = open_index(config)
    question = "How is the backoff time of a retry attempt computed before sleeping?"
    found = locate(store, question)
    assert [s.symbol for s in found.spans[:2]] == ["Retry.get_backoff_time", "Retry.sleep_for_backoff"]
    # a change to the sleeping function: found by the top file's second span
    q = Question("q1", question, ["pkg/retry.py"],
                 {"gold_functions": [{"path": "pkg/retry.py", "qualname": "Retry.sleep_for_backoff"}]})
    outcome = Outcome(q, found.files, 0.0, found.spans)
    assert function_hit(outcome, {})
    assert not function_hit(outcome, {}, k=1)


INI_H = """/* Parse INI-style configuration files. */
#ifndef INI_H
#define INI_H
#include <stdio.h>

typedef int (*ini_handler)(void* user, const char* section, const char* name, const char* value);

/* Parse the named INI file, calling handler for each name=value pair; 0 on success, -1 when the file
   cannot be opened. */
int ini_parse(const char* filename, ini_handler handler, void* user);

/* Same as ini_parse, but reads an already open FILE. */
int ini_parse_file(FILE* file, ini_handler handler, void* user);

#endif
"""

INI_C = """#include <string.h>
#include "ini.h"

static char* rstrip(char* s) {
    char* p = s + strlen(s);
    while (p > s && (*--p == '\\n' || *p == ' ')) *p = '\\0';
    return s;
}

int ini_parse_file(FILE* file, ini_handler handler, void* user) {
    char line[200];
    while (fgets(line, sizeof(line), file) != NULL) {
        handler(user, "", "", rstrip(line));
    }
    return 0;
}

int ini_parse(const char* filename, ini_handler handler, void* user) {
    FILE* file = fopen(filename, "r");
    if (!file)
        return -1;
    int error = ini_parse_file(file, handler, user);
    fclose(file);
    return error;
}
"""


def test_a_c_prototype_candidate_names_its_definition(make_repo):
    # the header matches the question best, but its prototype holds none of the code: the candidate is the
    # definition in ini.c, inside its own lines, and never named twice
    root = make_repo({"ini.h": INI_H, "ini.c": INI_C, "README.md": "# ini\nA small INI parser.\n"})
    config = load_config(root)
    index_repository(config, embedder=None)
    question = "ini_parse: return -1 when the named INI file cannot be opened"
    found = locate(open_index(config), question)
    named = [(s.path, s.symbol) for s in found.spans]
    assert ("ini.c", "ini_parse") in named
    assert not any(path == "ini.h" and symbol.startswith("ini_parse") for path, symbol in named)
    assert len(named) == len(set(named))
    span = next(s for s in found.spans if (s.path, s.symbol) == ("ini.c", "ini_parse"))
    assert (span.start_line, span.end_line) == (18, 25)
    q = Question("q1", question, ["ini.c"], {"gold_functions": [{"path": "ini.c", "qualname": "ini_parse"}]})
    assert function_hit(Outcome(q, found.files, 0.0, found.spans), {})
    reply = get_answer(AnswerContext(config, chat=None), question)
    assert ("ini.c", "ini_parse", (18, 25)) in [(c.path, c.symbol, c.lines) for c in reply.candidates]


CONFIG_SOURCE_KT = """package demo.config

/** Where the settings of a profile come from: a file, the environment, a remote store. */
interface ConfigSource {
    /** Loads the settings of the named profile, each setting's key to its value. */
    fun loadProfile(profile: String): Map<String, String>

    /** Whether this source can load the settings of the named profile. */
    fun hasProfile(profile: String, strict: Boolean = false): Boolean
}
"""

PROFILE_CACHE_KT = """package demo.config

/** Keeps the settings of each profile once loaded. */
abstract class ProfileCache {
    private val loaded = mutableMapOf<String, Map<String, String>>()

    /** Loads the settings of a profile that is not cached yet. */
    protected abstract fun loadProfile(profile: String): Map<String, String>

    fun cachedProfile(profile: String): Map<String, String> =
        loaded.getOrPut(profile) { loadProfile(profile) }

    fun forgetProfile(profile: String) {
        loaded.remove(profile)
    }
}
"""

FILE_SOURCE_KT = """package demo.config

import java.io.File

class FileConfigSource(private val dir: File) : ConfigSource {
    override fun loadProfile(profile: String): Map<String, String> {
        val settings = mutableMapOf<String, String>()
        File(dir, "$profile.properties").forEachLine { line ->
            val (key, value) = line.split("=", limit = 2)
            settings[key.trim()] = value.trim()
        }
        return settings
    }

    override fun hasProfile(profile: String, strict: Boolean): Boolean =
        File(dir, "$profile.properties").exists()
}
"""


def test_a_declaration_without_a_body_comes_after_the_functions_with_one(make_repo):
    # the interface matches the question best, but its declarations hold only a signature: the candidates
    # name the functions with a body first, the abstract class's one with a body (never its abstract
    # method), and a declaration only after them
    root = make_repo({"src/demo/config/ConfigSource.kt": CONFIG_SOURCE_KT,
                      "src/demo/config/ProfileCache.kt": PROFILE_CACHE_KT,
                      "src/demo/config/FileConfigSource.kt": FILE_SOURCE_KT})
    config = load_config(root)
    index_repository(config, embedder=None)
    question = "How are the settings of a profile loaded?"
    reply = get_answer(AnswerContext(config, chat=None), question)
    named = [c.symbol for c in reply.candidates]
    declared = {"ConfigSource.loadProfile", "ConfigSource.hasProfile", "ProfileCache.loadProfile"}
    with_body = [i for i, name in enumerate(named) if name not in declared]
    without = [i for i, name in enumerate(named) if name in declared]
    assert "FileConfigSource.loadProfile" in named
    assert "ProfileCache.loadProfile" not in named
    assert any(name.startswith("ProfileCache.") for name in named)
    assert with_body
    assert all(i < j for i in with_body for j in without), named
    # sourcebook eval reads the same spans
    spans = [s.symbol for s in locate(open_index(config), question).spans]
    assert spans == named
