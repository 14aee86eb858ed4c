"""Diagrams readable at 1280 px, in a real browser (Debian chromium over DevTools, Mermaid from the pinned
local copy): on a repository with a 52-class hierarchy and two dozen packages, every drawn label of every
diagram on the home page and on the package's page is at least 12 px on screen, the page does not overflow
sideways, and a diagram bigger than its box pans and zooms (buttons, Ctrl + wheel, drag change its
transform)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.build import build
from sourcebook.config import load_config
from tests.support.browser import CHROMIUM, MERMAID, DevTools, mermaid_svg_texts, new_tab, open_page
from tests.support.repo_files import write_files
from tests.support.servers import static_site

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
    pytest.mark.skipif(MERMAID is None, reason="no local mermaid.js (`sourcebook setup`): nothing is drawn"),
]


def _repo() -> dict[str, str | bytes]:
    """`shop/`: 24 subpackages importing each other (a full architecture diagram) and `shop/errors.py`, a
    base error, 40 direct subclasses, 3 of them with 2 subclasses each, and 5 more classes: 52 in all."""
    files: dict[str, str | bytes] = {"README.md": "# Shop\n\nShop sells things.\n",
                                     "shop/__init__.py": '"""The shop."""\nfrom .errors import ShopError\n'}
    for i in range(24):
        deps = "".join(f"from shop.part{(i + k) % 24:02} import run{(i + k) % 24:02}\n" for k in (1, 2))
        files[f"shop/part{i:02}/__init__.py"] = ""
        files[f"shop/part{i:02}/core.py"] = (f"{deps}from shop.errors import ShopError\n\n\n"
                                             f"def run{i:02}():\n    raise ShopError()\n")
    errors = ['"""Every error the shop raises."""\n\n\nclass ShopError(Exception):\n    """The base."""\n']
    errors += [f"\n\nclass Failure{i:02}ForSomeReason(ShopError):\n    pass\n" for i in range(40)]
    errors += [f"\n\nclass Failure{i:02}Detail{j}(Failure{i:02}ForSomeReason):\n    pass\n"
               for i in range(3) for j in range(2)]
    errors += [f"\n\nclass Other{i}(ShopError):\n    pass\n" for i in range(5)]
    files["shop/errors.py"] = "".join(errors)
    return files


@pytest.fixture(scope="module")
def shop_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = write_files(tmp_path_factory.mktemp("shop"), _repo())
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    with static_site(report.site_dir) as url:
        yield url


def _attrs(node: dict[str, Any]) -> dict[str, str]:
    a = node.get("attributes", [])
    return dict(zip(a[::2], a[1::2], strict=True))


def _label_sizes(tools: DevTools) -> list[list[float]]:
    """Per drawn diagram: the on-screen font size (px) of each element holding label text: its computed
    font size times the scale its SVG is drawn at (the SVG's width on screen over its viewBox's), the host's
    zoom included (box-model quads are in screen coordinates)."""
    mermaid_svg_texts(tools)  # waits until every diagram is drawn
    tools.call("CSS.enable")
    root = tools.call("DOM.getDocument", depth=-1, pierce=True)["root"]
    svgs: list[dict[str, Any]] = []

    def find(node: dict[str, Any], in_diagram: bool) -> None:
        if in_diagram and node.get("nodeName") == "svg":
            svgs.append(node)
            return
        in_diagram = in_diagram or (node.get("nodeName") == "DIV"
                                    and "mermaid" in _attrs(node).get("class", "").split())
        for child in [*node.get("children", []), *node.get("shadowRoots", [])]:
            find(child, in_diagram)

    find(root, False)
    out = []
    for svg in svgs:
        view_width = float(_attrs(svg)["viewBox"].split()[2])
        quad = tools.call("DOM.getBoxModel", nodeId=svg["nodeId"])["model"]["border"]
        scale = (max(quad[0::2]) - min(quad[0::2])) / view_width
        holders: list[int] = []
        todo = [svg]
        while todo:
            node = todo.pop()
            if node.get("nodeName") == "style":
                continue
            children = node.get("children", [])
            if any(c.get("nodeType") == 3 and c.get("nodeValue", "").strip() for c in children):
                holders.append(node["nodeId"])
            todo += children
        sizes = []
        for node_id in holders:
            style = {p["name"]: p["value"] for p in
                     tools.call("CSS.getComputedStyleForNode", nodeId=node_id)["computedStyle"]}
            sizes.append(float(style["font-size"].removesuffix("px")) * scale)
        out.append(sizes)
    return out


def _transform(tools: DevTools, box: int) -> str:
    return str(tools.evaluate(f"document.querySelectorAll('.sb-zoom--on')[{box}]"
                              ".querySelector('div.mermaid').style.transform"))


@pytest.mark.parametrize("page", ["index.html", "modules/shop/index.html"])
def test_every_label_is_readable_at_1280px_and_big_diagrams_pan_and_zoom(browser: str, shop_url: str,
                                                                        page: str) -> None:
    tools = new_tab(browser, width=1280)
    try:
        open_page(tools, shop_url + page)
        sizes = _label_sizes(tools)
        assert sizes, "no diagram drawn"
        assert all(sizes), sizes  # each with labels
        if page.startswith("modules/"):
            assert len(sizes) >= 4  # the import diagram and the hierarchy in parts of <= 25 classes
            assert "Failure39ForSomeReason" in " ".join(mermaid_svg_texts(tools))
        smallest = min(min(s) for s in sizes)
        assert smallest >= 12, (page, smallest)
        overflow = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert tools.evaluate(overflow) <= 0
        big = tools.evaluate("document.querySelectorAll('.sb-zoom--on').length")
        assert big >= 1  # a wide diagram is in a pan-and-zoom box, not shrunk
        before = _transform(tools, 0)
        tools.evaluate("document.querySelector('.sb-zoom--on button[aria-label=\"Zoom in\"]').click()")
        zoomed = _transform(tools, 0)
        assert zoomed != before
        assert "scale(1.25)" in zoomed
        # labels grow with the zoom: what the reader sees is what _label_sizes measures
        assert min(min(s) for s in _label_sizes(tools)) >= smallest
        x, y = tools.evaluate("(() => { const box = document.querySelector('.sb-zoom--on');"
                              " box.scrollIntoView({block: 'center'}); const r = box.getBoundingClientRect();"
                              " return [r.left + r.width / 3, r.top + r.height / 2]; })()")
        tools.call("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=0, deltaY=-100,
                   modifiers=2)  # Ctrl
        tools.pump(0.2)
        wheeled = _transform(tools, 0)
        assert wheeled != zoomed, "Ctrl + wheel did not zoom"
        tools.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=1)
        for step in range(1, 6):
            tools.call("Input.dispatchMouseEvent", type="mouseMoved", x=x - 20 * step, y=y + 5 * step,
                       button="left", buttons=1)
        tools.call("Input.dispatchMouseEvent", type="mouseReleased", x=x - 100, y=y + 25, button="left",
                   clickCount=1)
        dragged = _transform(tools, 0)
        moved = [float(v) for v in re.findall(r"-?[\d.]+(?=px)", dragged)]
        was = [float(v) for v in re.findall(r"-?[\d.]+(?=px)", wheeled)]
        assert moved[0] < was[0] - 50, (wheeled, dragged)  # panned left with the pointer
        tools.evaluate("document.querySelector('.sb-zoom--on button[aria-label=\"Actual size\"]').click()")
        assert _transform(tools, 0) == "translate(0px, 0px) scale(1)"
        assert tools.errors() == []
    finally:
        tools.close()


def test_an_arrow_to_a_package_box_renders(browser: str, tmp_path: Path) -> None:
    # a Go module: the middleware files import the root package, drawn as arrows to its box
    files: dict[str, str | bytes] = {"go.mod": "module example.com/chi\n\ngo 1.22\n"}
    for name in ("chi", "mux", "tree"):
        files[f"{name}.go"] = f"package chi\n\n// {name.title()} does it.\nfunc {name.title()}() {{}}\n"
    for name in ("logger", "strip", "timeout"):
        files[f"middleware/{name}.go"] = (
            f'package middleware\n\nimport "example.com/chi"\n\n// {name.title()} wraps.\n'
            f"func {name.title()}() {{ chi.Mux(); chi.Tree(); chi.Chi() }}\n")
    root = write_files(tmp_path / "repo", files)
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    home = (root / ".sourcebook" / "docs" / "index.md").read_text(encoding="utf-8")
    assert re.search(r"^\s+f\d+ --> c\d+$", home, re.M), home  # the arrow ends at the box
    tools = new_tab(browser, 1280)
    try:
        open_page(tools, (report.site_dir / "index.html").as_uri())
        rendered = mermaid_svg_texts(tools)
        assert any("logger.go" in text and "mux.go" in text for text in rendered), rendered
        assert tools.errors() == []
    finally:
        tools.close()
