"""The layers of the package (docs/architecture.md), read from the source: who may import whom.

    app        api, cli/, plan, doctor, options, sources, about, demo, pytest_plugin
    testing/   the public test helpers: the domains and regen, never the app
    regen/     the pure regeneration: the kernel only (it never knows where atoms come from)
    mrconso/   uts/   snomed/     the three domains: the kernel and their own package only
    kernel     constants, errors (leaves), runtime, config, secret, files, jsonio, zips, atoms,
               lookups, progress, and the package's own __init__ (its names are imported on
               first use)

Every import counts, in a function too; those under ``if TYPE_CHECKING:`` (types only) do not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tempmedbench_synonyms

PACKAGE = Path(tempmedbench_synonyms.__file__).parent
TOP = "tempmedbench_synonyms"

LEAVES = {"constants", "errors"}
KERNEL = LEAVES | {
    "__init__", "runtime", "config", "secret", "files", "jsonio", "zips", "atoms", "lookups",
    "progress",
}  # fmt: skip
DOMAINS = {"mrconso", "uts", "snomed"}
APP = {"api", "umls", "cli", "plan", "doctor", "options", "sources", "about", "demo",
       "pytest_plugin", "__main__"}  # fmt: skip


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
    """The package's modules that a file imports at run time, as ``a.b`` under the package."""
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import"
            module = node.module or ""
            # `from tempmedbench_synonyms import jsonio` imports the module jsonio; a name that
            # is no module (``__version__``) comes from the package's own __init__
            names = [module]
            if module == TOP:
                names = [f"{TOP}.{_module_or_init(a.name)}" for a in node.names]
        else:
            continue
        found |= {n.removeprefix(TOP + ".") for n in names if n.startswith(TOP + ".")}
    return found


def _module_or_init(name: str) -> str:
    """``name`` if it is a module of the package, else ``__init__`` (where the name lives)."""
    if (PACKAGE / f"{name}.py").is_file() or (PACKAGE / name / "__init__.py").is_file():
        return name
    return "__init__"


def layer_of(module: str) -> str:
    """A module's layer: kernel, regen, a domain, testing or app (``module`` as ``a.b``)."""
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
}


def modules() -> dict[str, Path]:
    return {
        ".".join(p.relative_to(PACKAGE).with_suffix("").parts): p
        for p in sorted(PACKAGE.rglob("*.py"))
    }


def test_every_module_is_in_a_layer() -> None:
    assert {layer_of(m) for m in modules()} == set(ALLOWED)


@pytest.mark.parametrize("module", sorted(modules()))
def test_each_module_imports_only_what_its_layer_may(module: str) -> None:
    layer = layer_of(module)
    wrong = sorted(m for m in imports_of(modules()[module]) if layer_of(m) not in ALLOWED[layer])
    assert wrong == [], f"{module} ({layer}) imports {wrong}"


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
