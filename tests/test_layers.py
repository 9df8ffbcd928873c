"""The layers of the package (docs/architecture.md), read from the source: who may import whom.

    face       the package's own __init__: the public API, its names imported on first use;
               nothing of the package imports it (``__version__`` lives in constants)
    app        api, cli/, plan, doctor, options, about, demo, pytest_plugin
    testing/   the public test helpers: the domains and regen, never the app
    regen/     the pure regeneration: the kernel only (it never knows where atoms come from)
    mrconso/   uts/   snomed/     the three domains: the kernel and their own package only;
               inside uts/ and mrconso/ each module imports only those below it (``ORDER``)
    kernel     constants, errors (leaves), runtime, config, secret, files, jsonio, zips, atoms,
               paths, lookups, progress

Every import counts, in a function too; those under ``if TYPE_CHECKING:`` (types only) do not.
"""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path

import pytest

import tempmedbench_synonyms
from helpers import ROOT
from tempmedbench_synonyms import constants

PACKAGE = Path(tempmedbench_synonyms.__file__).parent
TOP = "tempmedbench_synonyms"

LEAVES = {"constants", "errors"}
KERNEL = LEAVES | {
    "runtime", "config", "secret", "files", "jsonio", "zips", "atoms", "paths", "lookups",
    "progress",
}  # fmt: skip
DOMAINS = {"mrconso", "uts", "snomed"}
APP = {"api", "umls", "terminology", "cli", "plan", "doctor", "options", "about",
       "demo", "pytest_plugin", "__main__"}  # fmt: skip


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",):
            todo.extend(node.orelse)
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def imports_of(path: Path) -> set[str]:
    """The package's modules that a file imports at run time, named as ``modules()`` names them
    (``uts.models``, ``uts.__init__``; the package's own ``__init__`` is ``__init__``)."""
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import"
            module = node.module or ""
            # `from tempmedbench_synonyms.uts import models` imports the module uts.models; a name
            # that is no module (``__version__``) comes from the package's __init__
            names = [_module_or_init(module, a.name) for a in node.names]
        else:
            continue
        found |= {_as_module(n) for n in names if n == TOP or n.startswith(TOP + ".")}
    return found


def _module_or_init(package: str, name: str) -> str:
    """``package.name`` if it is a module or package, else ``package`` (where the name lives)."""
    folder = PACKAGE.joinpath(*f"{package}.{name}".split(".")[1:])
    if folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file():
        return f"{package}.{name}"
    return package


def _as_module(dotted: str) -> str:
    """``tempmedbench_synonyms.a.b`` as ``modules()`` names it: a package is its ``__init__``."""
    parts = dotted.split(".")[1:]
    if (PACKAGE.joinpath(*parts) / "__init__.py").is_file():
        parts.append("__init__")
    return ".".join(parts)


def layer_of(module: str) -> str:
    """A module's layer: kernel, regen, a domain, testing, app or face (``module`` as ``a.b``)."""
    if module == "__init__":
        return "face"
    first = module.split(".")[0]
    if first in KERNEL:
        return "kernel"
    if first in DOMAINS or first in ("regen", "testing"):
        return first
    assert first in APP, f"{module} is in no layer: add it to tests/test_layers.py"
    return "app"


#: Whom each layer may import (besides itself).
ALLOWED = {
    "kernel": {"kernel"},
    "regen": {"kernel", "regen"},
    "mrconso": {"kernel", "mrconso"},
    "uts": {"kernel", "uts"},
    "snomed": {"kernel", "snomed"},
    "testing": {"kernel", "regen", "testing", *DOMAINS},
    "app": {"kernel", "regen", "testing", "app", *DOMAINS},
    # the package face imports its names on first use (importlib), which no layer imports back
    "face": {"kernel", "regen", "testing", "app", *DOMAINS},
}

#: The modules of uts/ and mrconso/, top to bottom: each imports only modules below it in its
#: package (and the kernel). docs/architecture.md's module map lists them in this order.
ORDER = {
    "uts": [
        "__init__", "session", "source", "batch", "estimate", "workers", "cached",
        "cache", "client", "ratelimit", "watchdog", "models", "options",
    ],
    "mrconso": [
        "__init__", "index", "engine", "source", "worker", "scan", "forms", "shapes", "rows",
    ],
}  # fmt: skip


def modules() -> dict[str, Path]:
    return {
        ".".join(p.relative_to(PACKAGE).with_suffix("").parts): p
        for p in sorted(PACKAGE.rglob("*.py"))
    }


def test_every_module_is_in_a_layer() -> None:
    assert {layer_of(m) for m in modules()} == set(ALLOWED)


def wrong_imports(module: str, path: Path) -> list[str]:
    """What ``path``, as the module ``module``, imports that its layer may not."""
    layer = layer_of(module)
    return sorted(m for m in imports_of(path) if layer_of(m) not in ALLOWED[layer])


@pytest.mark.parametrize("module", sorted(modules()))
def test_each_module_imports_only_what_its_layer_may(module: str) -> None:
    wrong = wrong_imports(module, modules()[module])
    assert wrong == [], f"{module} ({layer_of(module)}) imports {wrong}"


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("from tempmedbench_synonyms import __version__", {"__init__"}),
        ("import tempmedbench_synonyms", {"__init__"}),
        ("import tempmedbench_synonyms as t", {"__init__"}),
        ("def f():\n    from tempmedbench_synonyms import Umls", {"__init__"}),
        ("from tempmedbench_synonyms import jsonio, __version__", {"jsonio", "__init__"}),
        ("from tempmedbench_synonyms import jsonio", {"jsonio"}),
        ("from tempmedbench_synonyms.uts import models", {"uts.models"}),
        ("from tempmedbench_synonyms import uts", {"uts.__init__"}),
        ("from tempmedbench_synonyms.uts.models import UtsAtom", {"uts.models"}),
    ],
)
def test_the_layer_test_sees_an_import_of_the_package_face(
    tmp_path: Path, code: str, found: set[str]
) -> None:
    """An import of the package face, from anywhere in the package, fails (a test that could
    never fail proves nothing): no layer may import the face, not the kernel, not the app."""
    path = tmp_path / "m.py"
    path.write_text(f"{code}\n", encoding="utf-8")
    assert imports_of(path) == found
    for module in ("constants", "jsonio", "uts.client", "uts.cached", "testing.fake", "about"):
        assert ("__init__" in wrong_imports(module, path)) == ("__init__" in found), module


def test_the_version_lives_in_the_constants_leaf() -> None:
    """The face re-exports it; the build reads it there (pyproject's hatch version path, read
    with hatch's own default pattern)."""
    assert tempmedbench_synonyms.__version__ is constants.__version__
    hatch = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["hatch"]
    path = ROOT / hatch["version"]["path"]
    assert path == PACKAGE / "constants.py"
    pattern = r"""(?i)^(__version__|VERSION) *= *(['"])v?(?P<version>.+?)\2"""
    found = re.search(pattern, path.read_text("utf-8"), flags=re.MULTILINE)
    assert found is not None and found["version"] == constants.__version__


def upward_imports(package: str, imports: dict[str, set[str]]) -> list[str]:
    """The imports inside ``package`` that go up (or across) its ``ORDER``, as ``a -> b``."""
    order = ORDER[package]
    return sorted(
        f"{module} -> {target}"
        for module, targets in imports.items()
        for target in targets
        if target.split(".")[0] == package
        and order.index(target.split(".", 1)[1]) <= order.index(module)
    )


@pytest.mark.parametrize("package", sorted(ORDER))
def test_every_module_of_uts_and_mrconso_has_its_place(package: str) -> None:
    here = sorted(p.stem for p in (PACKAGE / package).glob("*.py"))
    assert sorted(ORDER[package]) == here
    assert len(set(ORDER[package])) == len(ORDER[package])


@pytest.mark.parametrize("package", sorted(ORDER))
def test_inside_uts_and_mrconso_each_module_imports_only_those_below_it(package: str) -> None:
    imports = {
        m.split(".", 1)[1]: imports_of(p)
        for m, p in modules().items()
        if m.split(".")[0] == package
    }
    assert upward_imports(package, imports) == []


def test_the_order_test_sees_an_import_up_the_order() -> None:
    assert upward_imports("uts", {"models": {"uts.cached", "errors"}}) == ["models -> uts.cached"]
    assert upward_imports("uts", {"cached": {"uts.cached"}}) == ["cached -> uts.cached"]
    assert upward_imports("mrconso", {"rows": {"mrconso.__init__"}}) == ["rows -> mrconso.__init__"]
    assert upward_imports("mrconso", {"index": {"mrconso.rows", "uts.paths"}}) == []


@pytest.mark.parametrize("package", sorted(ORDER))
def test_the_module_map_shows_the_order(package: str) -> None:
    """docs/architecture.md lists the modules of uts/ and mrconso/ top to bottom, as ``ORDER``."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## The module map") :]
    listed = re.findall(rf"^{package}/(\w+)\.py\b", section, flags=re.MULTILINE)
    assert listed == [m for m in ORDER[package] if m != "__init__"]


def test_the_leaves_import_nothing_of_the_package() -> None:
    found = {m: imports_of(p) for m, p in modules().items() if m in LEAVES}
    assert found == {m: set() for m in LEAVES}


def test_the_domains_never_import_regen_or_the_app() -> None:
    """Said again plainly: uts/ and mrconso/ never reach regen/ nor api, cli, plan or doctor."""
    for module, path in modules().items():
        if module.split(".")[0] in ("uts", "mrconso"):
            assert not {m.split(".")[0] for m in imports_of(path)} & {
                "regen", "api", "cli", "plan", "doctor",
            }, module  # fmt: skip


def test_every_package_says_what_it_holds() -> None:
    """``__all__`` in every package's ``__init__``, naming only what is there."""
    for init in sorted(PACKAGE.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        names = [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        ]
        assert names, f"{init.relative_to(PACKAGE)} has no __all__"
        listed = ast.literal_eval(names[0])
        here = {p.stem for p in init.parent.glob("*.py")} | {
            p.name for p in init.parent.iterdir() if (p / "__init__.py").is_file()
        }
        defined = {
            n.name
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.ClassDef))
        } | {
            t.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        } | {
            a.asname or a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom)
            for a in n.names
        }  # fmt: skip
        top = init.parent == PACKAGE
        lazy = set(getattr(tempmedbench_synonyms, "_WHERE", {})) if top else set()
        assert set(listed) <= here | defined | lazy, init.relative_to(PACKAGE)


def test_only_the_uts_client_imports_requests() -> None:
    users = sorted(
        m
        for m, p in modules().items()
        if any(
            isinstance(n, (ast.Import, ast.ImportFrom))
            and any(
                (getattr(n, "module", None) or a.name).split(".")[0] in ("requests", "urllib3")
                for a in n.names
            )
            for n in _runtime_nodes(ast.parse(p.read_text(encoding="utf-8")))
        )
    )
    assert users == ["uts.client"]


def test_the_linters_immutable_calls_name_objects_that_exist() -> None:
    """ruff's ``extend-immutable-calls`` names objects by their path: a module folded into another
    (issue 23's cuts) leaves a name that exempts nothing, silently."""
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["ruff"]
    names = ruff["lint"]["flake8-bugbear"]["extend-immutable-calls"]
    missing = []
    for name in names:
        module, _, attribute = name.rpartition(".")
        try:
            found = hasattr(importlib.import_module(module), attribute)
        except ImportError:
            found = False
        if not found:
            missing.append(name)
    assert missing == []
