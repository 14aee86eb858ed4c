"""No module of sourcebook uses another module's `_private` names: what two modules share is a public name of
one of them (read with ast, imports inside functions and under TYPE_CHECKING included)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("generator", "answer", "sourcebook")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module an `from X import …` names, relative imports resolved against `module`."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def private_uses(module: str, source: str, modules: set[str], *, is_package: bool = False) -> list[str]:
    """`line: other.module._name` for each private name of another of `modules` that `source` (the text of
    `module`) imports or reads as an attribute of an imported module."""
    tree = ast.parse(source)
    found = []
    aliases: dict[str, str] = {}  # a local name -> the module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(module, is_package, node)
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:  # `from package import module`
                    aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
                elif _private(alias.name) and target in modules and target != module:
                    found.append(f"{node.lineno}: {target}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:  # `import a.b.c as m` binds the module itself
                    aliases[alias.asname] = alias.name
                else:  # `import a.b.c` binds `a`
                    aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        chain = []
        value: ast.expr = node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in aliases:
            target = ".".join([aliases[value.id], *reversed(chain)])
            if target in modules and target != module:
                found.append(f"{node.lineno}: {target}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names() -> None:
    modules = _modules()
    names = set(modules)
    found = [f"{path.relative_to(ROOT)}:{use}" for module, path in modules.items()
             for use in private_uses(module, path.read_text(encoding="utf-8"), names,
                                     is_package=path.name == "__init__.py")]
    assert found == []


def test_each_way_of_reaching_a_private_name_is_found() -> None:
    modules = {"pkg", "pkg.a", "pkg.b", "pkg.sub", "pkg.sub.c"}
    source = (
        "from pkg.a import _helper, public\n"          # 1: absolute import of a private name
        "from . import a as mod\n"                      # 2: a module bound by a relative import
        "from .sub.c import _other\n"                   # 3: relative import of a private name
        "import pkg.sub.c as c\n"                       # 4
        "import pkg.a\n"                                # 5
        "def f():\n"
        "    from pkg.sub import c as lazy\n"           # 7: inside a function
        "    return mod._x, c._y, pkg.a._z, lazy._w, c.__name__, public._not_a_module\n"  # 8
    )
    assert sorted(private_uses("pkg.b", source, modules)) == sorted([
        "1: pkg.a._helper", "3: pkg.sub.c._other", "8: pkg.a._x", "8: pkg.sub.c._y", "8: pkg.a._z",
        "8: pkg.sub.c._w"])
    # a module's own private names, and dunders, are its own business
    assert private_uses("pkg.a", "import pkg.a\nx = pkg.a._mine\nfrom pkg.a import _mine\n", modules) == []
