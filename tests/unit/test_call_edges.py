"""Call links a reader can trust: a small repository with every call shape, built by `sourcebook build`, shows
exactly the right "Calls" / "Called by" / "Tested by" links on its file pages
(generator/analyze/references.py)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest

from generator.build import build
from sourcebook.config import load_config
from tests.support.repo_files import write_files

REPO: dict[str, str | bytes] = {
    "pkg/__init__.py": "from .store import Store\n",
    "pkg/base.py": ("class Base:\n"
                    "    def lookup(self, key):\n        return key\n\n"
                    "    def save(self):\n        return None\n"),
    "pkg/util.py": ("def write_all(x):\n"
                    "    x.get('a')\n"  # unknown receiver, a common name: no edge to Store.get or Cache.get
                    "    return helper()\n\n\n"
                    "def helper():\n    return 1\n"),
    "pkg/store.py": ("from . import util\nfrom .base import Base\n\n\n"
                     "class Store(Base):\n"
                     "    def get(self, key):\n        return self.lookup(key)\n\n"  # inherited from Base
                     "    def pop(self, key):\n"
                     "        options = {}\n        options.pop(key)\n"  # a dict's pop, not Store.pop
                     "        return self.get(key)\n\n"
                     "    def save(self):\n"
                     "        super().save()\n"  # Base.save, not Store.save
                     "        util.write_all(self)\n"  # through the module import
                     "        Store.describe()\n"  # by class name
                     "        return {}.get('x')\n\n"  # a dict's get, not Store.get
                     "    @classmethod\n    def describe(cls):\n        return cls.__name__\n\n"
                     "    @classmethod\n    def create(cls):\n        return cls()\n\n\n"  # the class
                     "def make():\n    return Store()\n\n\n"  # the constructor: the class
                     "def fresh() -> Store:\n    return make()\n\n\n"
                     "DEFAULT = Store()\n"),
    "pkg/other.py": ("import pkg.store\nimport pkg.util as u\nfrom .store import Store as S, fresh\n\n\n"
                     "class Cache:\n    def get(self, key):\n        return key\n\n\n"
                     "def use(cache):\n    return cache.get(1)\n\n\n"  # type unknown: no edge at all
                     "def build_one():\n    return Cache().get(2)\n\n\n"  # the instance's class: Cache.get
                     "def typed(store: S):\n    return store.pop(1)\n\n\n"  # annotated, through an alias
                     "def assigned():\n    s = S()\n    return s.save()\n\n\n"  # assigned an instance
                     "def use_alias():\n    return u.helper()\n\n\n"  # a module imported under an alias
                     "def via_return():\n    return fresh().pop(2)\n\n\n"  # the declared return type
                     "def via_package():\n    return pkg.Store()\n\n\n"  # `import pkg.store` binds pkg
                     "def via_constant():\n    return pkg.store.DEFAULT.describe()\n\n\n"  # its class
                     "def reassigned():\n    s = S()\n    s = dict()\n    return s.save()\n\n\n"  # unknown
                     "class Holder:\n    def __init__(self):\n        self.cache = Cache()\n\n"
                     "    def fetch(self):\n        return self.cache.get(3)\n"),  # an attribute's type
    "web/shapes.ts": ("export class Circle {\n  area(): number { return this.radius() * 3; }\n"
                      "  radius(): number { return 1; }\n}\n\n"
                      "export class Square {\n  radius(): number { return 2; }\n"
                      "  area(): number { return this.radius() ** 2; }\n}\n"),
    "tools/run.py": "def main():\n    return 1\n\n\nmain()\n",  # called from the file's own top level
    "tests/test_store.py": ("from pkg import Store\n\n\n"
                            "def test_get():\n    assert Store().get('k') == 'k'\n"),
}


def _links(markdown: str, heading: str) -> dict[str, list[str]]:
    """{"Calls": [link text, ...], ...} of the section of the symbol named `heading`."""
    sections = re.split(r"(?m)^#{2,6} ", markdown)
    section = next(s for s in sections if html.unescape(s).startswith(heading + " {"))
    out: dict[str, list[str]] = {}
    # a line of links, as Markdown (`**Calls:** [a](#x)`) or as the HTML the renderer writes itself
    for label, links in re.findall(
            r"(?:\*\*|<strong>)(Calls|Uses|Called by|Used by|Tested by):(?:\*\*|</strong>) (.*)", section):
        texts = re.findall(r"\[([^\]]+)\]\(|<a [^>]*>([^<]+)</a>", links)
        out[label] = [html.unescape(md or tag) for md, tag in texts]
    return out


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    root = write_files(tmp_path_factory.mktemp("calls") / "repo", REPO)
    config = load_config(root)
    build(config, site=False, index=False)

    def page(path: str) -> str:
        return (config.docs_dir / f"files/{path}.md").read_text(encoding="utf-8")

    return page


def test_self_super_inherited_module_and_class_calls(pages: Callable[[str], str]) -> None:
    store = pages("pkg/store.py")
    assert _links(store, "Store.get") == {"Calls": ["base.py: Base.lookup"], "Called by": ["Store.pop"],
                                          "Tested by": ["test_store.py: test_get"]}
    assert _links(store, "Store.pop") == {"Calls": ["Store.get"],
                                          "Called by": ["other.py: typed", "other.py: via_return"]}
    assert _links(store, "Store.save") == {
        "Calls": ["base.py: Base.save", "Store.describe", "util.py: write_all"],
        "Called by": ["other.py: assigned"]}
    assert _links(store, "Store.describe") == {"Called by": ["other.py: via_constant", "Store.save"]}
    # a class is used (constructed, annotated), not called: "Uses" and "Used by" (issue 32)
    assert _links(store, "Store.create") == {"Uses": ["Store"]}
    assert _links(store, "make") == {"Uses": ["Store"], "Called by": ["fresh"]}
    assert "Called by" not in _links(store, "Store")
    assert _links(store, "Store")["Used by"] == [
        "other.py: assigned", "other.py: reassigned", "other.py: typed", "other.py: via_package", "DEFAULT",
        "Store.create",
        "fresh", "make"]


def test_annotations_assignments_attributes_and_aliases_give_types(pages: Callable[[str], str]) -> None:
    other = pages("pkg/other.py")
    # an annotation names the type: a use
    assert _links(other, "typed") == {"Calls": ["store.py: Store.pop"], "Uses": ["store.py: Store"]}
    assert _links(other, "assigned") == {"Calls": ["store.py: Store.save"], "Uses": ["store.py: Store"]}
    assert _links(other, "Holder.fetch") == {"Calls": ["Cache.get"]}
    assert _links(other, "via_return") == {"Calls": ["store.py: Store.pop", "store.py: fresh"]}
    assert _links(other, "via_package") == {"Uses": ["store.py: Store"]}
    assert _links(other, "via_constant") == {"Calls": ["store.py: Store.describe"]}
    assert _links(other, "reassigned") == {"Uses": ["store.py: Store"]}  # s holds a Store, then a dict
    assert _links(other, "Holder.__init__") == {"Uses": ["Cache"]}


def test_unknown_receivers_make_no_edge(pages: Callable[[str], str]) -> None:
    other = pages("pkg/other.py")
    assert _links(other, "use") == {}
    assert _links(other, "build_one") == {"Calls": ["Cache.get"], "Uses": ["Cache"]}
    assert _links(other, "Cache.get") == {"Called by": ["Holder.fetch", "build_one"]}
    util = pages("pkg/util.py")
    assert _links(util, "write_all") == {"Calls": ["helper"], "Called by": ["store.py: Store.save"]}
    assert _links(util, "helper") == {"Called by": ["other.py: use_alias", "write_all"]}
    base = pages("pkg/base.py")
    assert _links(base, "Base.save") == {"Called by": ["store.py: Store.save"]}
    assert _links(base, "Base.lookup") == {"Called by": ["store.py: Store.get"]}


def test_a_call_from_the_file_top_level_is_named_by_the_file(pages: Callable[[str], str]) -> None:
    # never a link without text ("Called by: , main"): the file's body is named by the file
    assert _links(pages("tools/run.py"), "main") == {"Called by": ["run.py"]}


def test_this_links_to_the_enclosing_class_own_member(pages: Callable[[str], str]) -> None:
    shapes = pages("web/shapes.ts")  # by name alone, each area() would call both radius() methods
    assert _links(shapes, "Circle.area") == {"Calls": ["Circle.radius"]}
    assert _links(shapes, "Square.area") == {"Calls": ["Square.radius"]}
