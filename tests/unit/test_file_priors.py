"""File priors of ranking (answer/retrieval/tiers.py): the length prior on plain line counts, the
questions it is not applied to (answer/retrieval/question.py is_explanatory), and which paths are
auxiliary code or tool configuration."""

import math

import pytest

from answer.retrieval.question import is_explanatory
from answer.retrieval.tiers import is_auxiliary, is_tool_config, length_priors


def test_only_files_longer_than_the_median_are_lifted():
    lines = {"a.py": 10, "b.py": 40, "c.py": 100, "d.py": 400, "e.py": 1000}
    priors = length_priors(lines, 0.1)
    assert set(priors) == {"d.py", "e.py"}  # the median is the middle file's 100 lines
    assert priors["d.py"] == pytest.approx(1 + 0.1 * math.log(401 / 101))
    assert priors["e.py"] > priors["d.py"] > 1.0


def test_the_prior_grows_with_the_logarithm_of_the_length():
    lines = {"small.py": 100, "mid.py": 100, "low.py": 90, "big.py": 1_000, "huge.py": 10_000}
    priors = length_priors(lines, 0.05)
    # ten times longer adds the same again, not ten times as much
    assert priors["huge.py"] - priors["big.py"] == pytest.approx(priors["big.py"] - 1.0, rel=0.01)
    assert priors["huge.py"] < 1.25


def test_the_median_is_the_repositorys_own():
    # the same file relative to its repository: lifted among short files, not among long ones
    assert "x.py" in length_priors({"x.py": 300, "a.py": 20, "b.py": 30}, 0.1)
    assert "x.py" not in length_priors({"x.py": 300, "a.py": 2000, "b.py": 3000}, 0.1)


@pytest.mark.parametrize("strength", [0.0, -0.5])
def test_no_strength_no_prior(strength):
    assert length_priors({"a.py": 1, "b.py": 5000, "c.py": 7}, strength) == {}


def test_empty_and_equal_lengths():
    assert length_priors({}, 0.1) == {}
    assert length_priors({"a.py": 50, "b.py": 50}, 0.1) == {}



@pytest.mark.parametrize("question", [
    "How does the session decide when to retry?",
    "what happens when a blueprint is registered twice",
    "Why is the cookie jar copied for each redirect?",
    "Does the client close the connection after a timeout?",
    "  Where are the default headers set?\nI looked in the adapter.",
])
def test_questions_about_how_the_code_works_are_explanatory(question):
    assert is_explanatory(question)


@pytest.mark.parametrize("question", [
    "Fix the retry loop when the server closes the connection",
    "Allow lists in the dict values of the hooks argument",
    "Do not allocate the buffer outside the conditionals",
    "Override Rack::Multipart::UploadedFile#respond_to_missing?",
    "style: switch from try! to ?",
    "Getting http://.example.com raises UnicodeError\n\nWhy does this happen?",
])
def test_tasks_and_reports_are_not(question):
    assert not is_explanatory(question)


@pytest.mark.parametrize("path", [
    "examples/basic/app.py",
    "_examples/rest/main.go",  # the go tool ignores folders starting with `_`: Go keeps examples there
    "src/__examples__/counter.tsx",
    "benches/parse.rs",
    "test/Perf/LoggerBenchmark.cs",  # BenchmarkDotNet and JMH name the class, not the folder
    "results/net8.0/LoggerBenchmark-report-github.md",  # a benchmark's report
    "tools/bench_parser.py",
    "middleware/client_ip_bench_test.go",
])
def test_auxiliary_code_by_folder_or_by_benchmark_name(path):
    assert is_auxiliary(path)


@pytest.mark.parametrize("path", [
    "src/pkg/_internal/utils.py",  # a private package of the product, not an example folder
    "chi.go",
    "src/Serilog/Core/Logger.cs",
    "src/workbench.ts",  # "bench" inside a word is not a benchmark
    "src/marked.ts",
    "lib/examples.rb",  # a file named examples is the product's (a folder of them is not)
])
def test_product_code_is_not_auxiliary(path):
    assert not is_auxiliary(path)


@pytest.mark.parametrize("path", [
    "rollup.config.mjs", "examples/starter/vite.config.ts", "vitest.config.mts", "karma.conf.js",
    ".eslintrc.cjs", "build.gradle.kts", "moshi-kotlin/build.gradle.kts", "settings.gradle", "gulpfile.js",
    "Gruntfile.js", "noxfile.py",
])
def test_build_and_tool_configuration_written_as_code(path):
    assert is_tool_config(path)


@pytest.mark.parametrize("path", [
    "src/app/app.config.ts",  # Angular's application config is the product's, inside its source folder
    "lib/config.js", "src/userConfig.ts", "config.py", "pkg/app.config.py", "build.rs",
])
def test_product_configuration_code_is_not_tool_configuration(path):
    assert not is_tool_config(path)
