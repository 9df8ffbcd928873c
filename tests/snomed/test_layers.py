"""The layering that snomed/__init__.py draws: each module imports only the ones below it, and of
the rest of the package only the kernel (``tests/test_layers.py``): errors, files, zips, jsonio
and runtime (the GPS hash thread)."""

from __future__ import annotations

import ast
from pathlib import Path

import tempmedbench_synonyms

PACKAGE = Path(tempmedbench_synonyms.__file__).parent
TOP = "tempmedbench_synonyms."

# Every module of snomed/ and what it may import from the package (exactly: a new import shows).
LAYERS = {
    "concepts": set(),
    "sctid": set(),
    "tables": {"errors"},
    "gps": {"errors", "files", "runtime", "snomed.concepts", "snomed.tables", "zips"},
    "rf2": {"errors", "files", "snomed.concepts", "snomed.tables", "zips"},
    "loader": {
        "errors",
        "files",
        "snomed.concepts",
        "snomed.gps",
        "snomed.rf2",
        "zips",
    },
    "validate": {
        "errors",
        "files",
        "jsonio",
        "snomed.concepts",
        "snomed.sctid",
        "zips",  # a release given as a zip is told to unzip it (zips.folder_hint)
    },
}


def package_imports(path: Path) -> set[str]:
    """The package's modules that a file imports, relative to ``tempmedbench_synonyms``."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative import"
            module = node.module or ""
            # `from tempmedbench_synonyms import jsonio` imports the module jsonio, and
            # `from tempmedbench_synonyms.snomed import tables` the module snomed.tables.
            folder = PACKAGE.joinpath(*module.split(".")[1:])
            names = [
                f"{module}.{a.name}"
                if module + "." == TOP or (folder / f"{a.name}.py").is_file()
                else module
                for a in node.names
            ]
        else:
            continue
        out |= {n.removeprefix(TOP) for n in names if n.startswith(TOP)}
    return out


def test_every_module_of_the_package_is_listed() -> None:
    modules = {p.stem for p in (PACKAGE / "snomed").glob("*.py")} - {"__init__"}
    assert modules == set(LAYERS)


def test_each_module_imports_only_the_layers_below_it() -> None:
    found = {m: package_imports(PACKAGE / "snomed" / f"{m}.py") for m in LAYERS}
    assert found == LAYERS
    assert package_imports(PACKAGE / "snomed" / "__init__.py") == set()


def test_the_synonym_side_does_not_import_the_snomed_side() -> None:
    """Only the gps commands of the CLI and the Python API (``validate_gps``) do."""
    users = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "snomed" not in p.relative_to(PACKAGE).parts
        and any(m.startswith("snomed") for m in package_imports(p))
    )
    assert users == ["api.py", "cli/gps.py"]
