"""Does the site search put a declaration's own section first when asked its exact name?

    python bench/site_search_rank.py SITE_DIR... [--worker PATH] [--sample 300]

For every built site (`REPO/.sourcebook/site`), the queries are the names of its symbol sections (anchors
`#sym-…`, titles without their parameter lists), a deterministic sample of them; each runs through the site's
own search worker in Node (bench/search_worker_node.js: the shipped JavaScript, the shards read from disk). A
query scores at rank 1 when the first section of the first result group is titled with that name, and at
rank r when that happens first at the r-th shown section. Printed per site: the share at rank 1 and in the
top 5, for all names and for top-level names (no dot: types and free functions), and the main type: the one
the home page names ("The main type is …"), asked by its last name (`Options` for `cxxopts::Options`), and
the rank at which its own section (the link's target) is shown. `--worker` runs another copy
of the worker over the same shards (e.g. main's, for a before/after in one run).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

HARNESS = Path(__file__).with_name("search_worker_node.js")
_SHARD = re.compile(r"^__sourcebookShard\((\"[^\"]*\"),(.*)\);\s*$", re.DOTALL)
_PARAMS = re.compile(r"\s*[(<\[].*$", re.DOTALL)


def sections(site: Path) -> dict[str, str]:
    """location -> plain title of every section in the site's content shards."""
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    folder = site / "search" / index["config"]["sourcebook"]["dir"]
    found: dict[str, str] = {}
    for path in folder.glob("c*.js"):
        match = _SHARD.match(path.read_text(encoding="utf-8"))
        if not match:
            continue
        data = json.loads(match.group(2))
        for page_at, anchor, title, _text in data["d"]:
            location = data["p"][page_at] + (f"#{anchor}" if anchor else "")
            found[location] = re.sub(r"<[^>]*>", "", title).strip()
    return found


def name_of(title: str) -> str:
    return _PARAMS.sub("", title).strip()


def run(site: Path, queries: list[str], worker: Path | None) -> list[list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        target = site
        if worker is not None:  # the same shards, another worker: a copy of the site's search assets
            target = Path(tmp) / "site"
            (target / "assets" / "sourcebook").mkdir(parents=True)
            shutil.copy(worker, target / "assets" / "sourcebook" / "search-worker.js")
            (target / "search").symlink_to(site / "search")
        proc = subprocess.run(["node", str(HARNESS), str(target)], input="\n".join(map(json.dumps, queries)),
                              capture_output=True, text=True, check=True)
    return [[loc for group in json.loads(line)["items"] for loc in group]
            for line in proc.stdout.splitlines()]


_MAIN = re.compile(r'The main (?:type|function) is <a href="([^"#]+)#([^"]+)"><code>([^<]+)</code>')


def main_type(site: Path) -> tuple[str, str] | None:
    """(query, location) of the main type the home page names: its last name, and its section."""
    found = _MAIN.search((site / "index.html").read_text(encoding="utf-8"))
    if not found:
        return None
    href, anchor, name = found.groups()
    page = re.sub(r"\.html$", "", href)
    return html.unescape(re.split(r"::|\.|\\", html.unescape(name).rstrip("()"))[-1]), f"{page}#{anchor}"


def main_rank(site: Path, worker: Path | None) -> tuple[str, int | None] | None:
    """The main type's query and the rank of its own section among the shown sections (None: not shown): the
    linked section, or another declaration of the same name (a C function's prototype in its header and its
    definition are both its sections)."""
    found = main_type(site)
    if found is None:
        return None
    query, location = found
    titles = sections(site)
    page, _, anchor = location.partition("#")
    title = next((t for loc, t in titles.items()
                  if loc.endswith("#" + anchor) and loc.split("#")[0].removesuffix(".html") == page), None)
    shown = run(site, [query], worker)[0]
    rank = next((i + 1 for i, loc in enumerate(shown) if "#sym-" in loc and titles.get(loc) == title), None)
    return query, rank


def measure(site: Path, sample: int, worker: Path | None) -> dict[str, float]:
    titles = sections(site)
    names = sorted({name_of(t) for loc, t in titles.items() if "#sym-" in loc and name_of(t)
                    and not any(c.isspace() for c in name_of(t))})
    tops = [n for n in names if "." not in n and "::" not in n]
    members = [n for n in names if n not in set(tops)]
    step = max(1, len(members) // sample)
    queries = tops[:sample] + members[::step][:sample]  # top-level names (up to --sample), members sampled
    ranks: list[int | None] = []
    for query, shown in zip(queries, run(site, queries, worker), strict=True):
        rank = next((i + 1 for i, loc in enumerate(shown)
                     if "#sym-" in loc and name_of(titles.get(loc, "")).lower() == query.lower()), None)
        ranks.append(rank)
    top = [r for q, r in zip(queries, ranks, strict=True) if "." not in q and "::" not in q]

    def share(values: list[int | None], k: int) -> float:
        return round(sum(1 for r in values if r is not None and r <= k) / max(1, len(values)), 3)

    return {"queries": len(queries), "at1": share(ranks, 1), "top5": share(ranks, 5),
            "toplevel": len(top), "toplevel_at1": share(top, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sites", nargs="+", type=Path)
    parser.add_argument("--worker", type=Path, default=None)
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args()
    print(f"{'site':<28} {'queries':>7} {'@1':>6} {'top5':>6} {'top-level':>9} {'@1':>6}  main type: rank")
    for site in args.sites:
        m = measure(site, args.sample, args.worker)
        label = site.parent.name.removesuffix(".out") if site.parent.name.endswith(".out") else (
            site.parent.parent.name if site.name == "site" else site.name)
        main = main_rank(site, args.worker)
        named = f"{main[0]}: {main[1] or 'not shown'}" if main else "(none named)"
        print(f"{label:<28} {m['queries']:>7} {m['at1']:>6} {m['top5']:>6} {m['toplevel']:>9} "
              f"{m['toplevel_at1']:>6}  {named}")


if __name__ == "__main__":
    main()
