"""synonym_regeneration/regenerate_synonyms.py: the launcher a release carries beside its hashes
(the dataset card's layout; issue 17, item 15). ``freeze`` writes it, the mini release carries
it, and it runs this tool on its own release folder, or says how to install it (exit 2)."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import MINI, MINI_MRCONSO, outputs
from tempmedbench_synonyms.mrconso.source import MrconsoSource
from tempmedbench_synonyms.regen.freeze import freeze, launcher_bytes
from tempmedbench_synonyms.regen.manifest import MANIFEST, read_manifest
from tempmedbench_synonyms.regen.pipeline import regenerate
from tempmedbench_synonyms.regen.release import EXPECTED, LAUNCHER
from tempmedbench_synonyms.testing import CANARY_KEY, find_secret, write_manifest

UNLISTED = (
    f"{LAUNCHER}: not listed in MANIFEST.sha256 (not part of the release); `freeze` wrote it: "
    "list it (freeze --update-manifest) before publishing"
)


def _install_message(problem: str, pip: str = "pip install", *, no_site: bool = False) -> str:
    python = sys.executable
    hidden = (
        "This Python runs with -S, which leaves out site-packages, where pip installs packages: "
        "if the package is installed there, run this script without -S.\n"
        if no_site
        else ""
    )
    return (
        f"regenerate_synonyms.py: {problem}\n"
        f"{hidden}"
        "Install it into this Python from a checkout of its code repository (the folder that "
        "holds its pyproject.toml), then run this script again:\n"
        f"    {python} -m {pip} PATH/TO/THE/CHECKOUT\n"
    )


NOT_INSTALLED = (
    "this Python cannot import the package tempmedbench-synonyms (0.1.0 or newer), which "
    "rebuilds and verifies the synonym surface."
)


def _launch(
    script: Path | str, *args: str | Path, cwd: Path, python: tuple[str, ...] = (sys.executable,),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        [*python, str(script), *map(str, args)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_mini_release_carries_the_launcher_freeze_writes() -> None:
    """One text: the package's data file; the bundled release lists it in its manifest."""
    assert (MINI / LAUNCHER).read_bytes() == launcher_bytes()
    assert LAUNCHER in read_manifest(MINI)
    # data, not a module of the package: nothing imports it by accident
    assert importlib.util.find_spec("tempmedbench_synonyms.regen.regenerate_synonyms") is None


def test_the_launcher_asks_for_the_pythons_the_package_declares() -> None:
    import tomllib

    from helpers import ROOT

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert declared["requires-python"] == ">=3.11"
    text = launcher_bytes().decode("utf-8")
    assert "if sys.version_info < (3, 11):" in text
    assert "tempmedbench-synonyms needs Python 3.11 or newer" in text


def test_the_launcher_uses_the_standard_library_only() -> None:
    tree = ast.parse(launcher_bytes().decode("utf-8"))
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    tops = {name.split(".")[0] for name in imported}
    assert tops - {"tempmedbench_synonyms"} <= set(sys.stdlib_module_names) | {"__future__"}
    assert imported == {"__future__", "os", "shlex", "signal", "sys", "tempmedbench_synonyms",
                        "tempmedbench_synonyms.cli"}  # fmt: skip


def test_freeze_with_update_manifest_writes_and_lists_the_launcher(mini: Path) -> None:
    (mini / LAUNCHER).unlink()
    write_manifest(mini)
    report = freeze(mini, MrconsoSource(MINI_MRCONSO), update_manifest=True, force=True)
    assert report.exit_code == 0
    assert report.message == (
        f"wrote {EXPECTED} and {LAUNCHER} and updated their lines in {MANIFEST}"
    )
    assert report.hint is None
    assert (mini / LAUNCHER).read_bytes() == launcher_bytes()
    assert read_manifest(mini) == read_manifest(MINI)
    (mini / (EXPECTED + ".bak")).unlink()
    verified = regenerate(mini, MrconsoSource(MINI_MRCONSO))
    assert (verified.outcome, verified.warnings) == ("verified", [])


def test_a_plain_freeze_writes_the_launcher_and_says_the_manifest_lacks_it(mini: Path) -> None:
    """Without --update-manifest the manifest is not touched (SPEC 4): the launcher is written
    all the same, the hint names it, and a run warns that the manifest does not list it (SPEC 1:
    a file not listed is named in a warning), saying what to do."""
    (mini / LAUNCHER).unlink()
    write_manifest(mini)
    manifest = (mini / MANIFEST).read_bytes()
    report = freeze(mini, MrconsoSource(MINI_MRCONSO), force=True)
    assert report.exit_code == 0
    assert report.message == f"wrote {EXPECTED} and {LAUNCHER}"
    assert report.hint == (
        f"MANIFEST.sha256 does not match the new {LAUNCHER}; rerun with --update-manifest or "
        "update the manifest yourself before publishing"
    )
    assert (mini / LAUNCHER).read_bytes() == launcher_bytes()
    assert (mini / MANIFEST).read_bytes() == manifest
    (mini / (EXPECTED + ".bak")).unlink()
    verified = regenerate(mini, MrconsoSource(MINI_MRCONSO))
    assert (verified.outcome, verified.warnings) == ("verified", [UNLISTED])


def test_a_plain_freeze_names_both_files_the_manifest_does_not_match(
    mini: Path, tmp_path: Path
) -> None:
    mrconso = tmp_path / "MRCONSO.RRF"
    mrconso.write_bytes(MINI_MRCONSO.read_bytes().replace(b"|Graft of moonstone|", b"|Graft|"))
    (mini / LAUNCHER).write_text("# an older launcher\n", encoding="utf-8")
    write_manifest(mini)
    report = freeze(mini, MrconsoSource(mrconso), force=True)
    assert report.hint == (
        f"MANIFEST.sha256 does not match the new {EXPECTED} and {LAUNCHER}; rerun with "
        "--update-manifest or update the manifest yourself before publishing"
    )


def test_the_launcher_runs_the_tool_on_its_own_release_from_anywhere(
    mini: Path, tmp_path: Path
) -> None:
    """Run by path from another folder, with this package importable: it regenerates the
    release that holds it, with the options given (relative ones from the working folder)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = os.path.relpath(mini / LAUNCHER, elsewhere)
    proc = _launch(script, "--mrconso", MINI_MRCONSO, "--out", "out", "--json", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["command"], report["outcome"], report["release"]) == (
        "regenerate", "verified", str(mini),
    )  # fmt: skip
    assert all(f["match"] and f["written"] for f in report["files"].values())
    assert outputs(elsewhere / "out") == sorted(report["files"])
    assert outputs(mini) == []


def test_the_launcher_passes_the_outcome_on(mini: Path, tmp_path: Path) -> None:
    mrconso = tmp_path / "MRCONSO.RRF"
    mrconso.write_bytes(MINI_MRCONSO.read_bytes().replace(b"|Graft of moonstone|", b"|Graft|"))
    proc = _launch(mini / LAUNCHER, "--mrconso", mrconso, "--out", tmp_path / "o", cwd=tmp_path)
    assert proc.returncode == 1
    assert "mismatch (exit 1)" in proc.stderr


def test_without_the_package_the_launcher_says_how_to_install_it(
    mini: Path, tmp_path: Path
) -> None:
    """A Python that cannot import this package (-I -S: no site-packages, no PYTHONPATH):
    exit 2, the exact install command for that Python, nothing written."""
    env = {**os.environ, "UMLS_API_KEY": CANARY_KEY}
    proc = _launch(
        mini / LAUNCHER, "--mrconso", MINI_MRCONSO, "--out", tmp_path / "out",
        cwd=tmp_path, python=(sys.executable, "-I", "-S"), env=env,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == _install_message(NOT_INSTALLED, no_site=True)
    assert not (tmp_path / "out").exists()
    assert outputs(mini) == []


@pytest.mark.parametrize(
    ("init", "cli", "problem", "pip"),
    [
        ('__version__ = "0.0.9"\n', "", "this release needs tempmedbench-synonyms 0.1.0 or newer; "
         "this Python has 0.0.9.", "pip install --upgrade"),
        ('__version__ = "9.1.dev0"\n', "raise ImportError(\"No module named 'typer'\")\n",
         "tempmedbench-synonyms 9.1.dev0 is installed but cannot be imported: No module named "
         "'typer'", "pip install --force-reinstall"),
    ],
    ids=["too old", "broken"],
)  # fmt: skip
def test_an_old_or_broken_package_is_said_with_its_fix(
    mini: Path, tmp_path: Path, init: str, cli: str, problem: str, pip: str
) -> None:
    """A hostile fake of the package, first on the path of a Python without site-packages."""
    fake = tmp_path / "fake" / "tempmedbench_synonyms"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(init, encoding="utf-8")
    (fake / "cli.py").write_text(cli or "raise AssertionError('not to be run')\n")
    (fake / "runtime.py").write_text("def hold_interrupts():\n    pass\n", encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(fake.parent),
           "UMLS_API_KEY": CANARY_KEY}  # fmt: skip
    proc = _launch(
        mini / LAUNCHER, "--out", tmp_path / "out", cwd=tmp_path,
        python=(sys.executable, "-S"), env=env,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == _install_message(problem, pip)
    assert CANARY_KEY not in proc.stderr
    assert not (tmp_path / "out").exists()


# -- the launcher in a child that changes one thing as it runs (trust audit 26, 27, 32) ---------

#: Runs the launcher by its path as ``python LAUNCHER ARGS`` would, after one change: ``signal``
#: sends the process the signal ``ARG`` (``SIGNAL:MODULE``) as ``MODULE`` starts to be imported
#: (a Ctrl-C pressed with the Enter that started it); ``missing`` makes the top-level packages
#: ``ARG`` (commas between) fail to import, as where pip left them out.
_CHILD = """
import os, runpy, sys
change, arg, launcher = sys.argv[1:4]
del sys.argv[1:4]
sys.argv[0] = launcher

class Change:
    def find_spec(self, name, path=None, target=None):
        if change == "signal" and name == arg.split(":")[1]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), int(arg.split(":")[0]))
        if change == "missing" and name.split(".")[0] in arg.split(","):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Change())
runpy.run_path(launcher, run_name="__main__")
"""


def _child(
    change: str, arg: str, launcher: Path, *args: str | Path, cwd: Path
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "TEMPMEDBENCH_"))}
    env.update(UMLS_API_KEY=CANARY_KEY, TEMPMEDBENCH_CACHE_DIR=str(cwd / "cache"))
    return subprocess.run(
        [sys.executable, "-c", _CHILD, change, arg, str(launcher), *map(str, args)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("how", "code", "name", "module"),
    [(signal.SIGINT, 130, "Ctrl-C", "tempmedbench_synonyms.cli"),
     (signal.SIGTERM, 143, "SIGTERM", "tempmedbench_synonyms.cli"),
     (signal.SIGINT, 130, "Ctrl-C", "tempmedbench_synonyms.runtime"),
     (signal.SIGTERM, 143, "SIGTERM", "tempmedbench_synonyms.runtime")],
    ids=["SIGINT-cli", "SIGTERM-cli", "SIGINT-runtime", "SIGTERM-runtime"],
)  # fmt: skip
def test_a_signal_while_the_launcher_imports_is_held_for_the_command(
    mini: Path, tmp_path: Path, how: int, code: int, name: str, module: str
) -> None:
    """The launcher imported the CLI without the console scripts' hold: a Ctrl-C gave a
    KeyboardInterrupt traceback or exit 130 with no report, a SIGTERM killed it with none. The
    command now starts and ends at once as interrupted, with its report; also for a signal
    before the package's hold (``runtime``), which the launcher holds from its start."""
    out = tmp_path / "out"
    args = ("--mrconso", MINI_MRCONSO, "--out", out, "--json")
    proc = _child("signal", f"{int(how)}:{module}", mini / LAUNCHER, *args, cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert (proc.returncode, report["outcome"], report["exit_code"], report["message"]) == (
        code, "interrupted", code, f"interrupted by {name}: what was fetched stays cached",
    )  # fmt: skip
    assert proc.stderr.splitlines() == [
        "interrupted: nothing was left half-written; run the same command again"
    ]
    assert not out.exists()


def test_a_mrconso_run_needs_no_http_stack(mini: Path, tmp_path: Path) -> None:
    """Without requests (pip install --no-deps ...), a --mrconso run, which needs no network,
    ended in exit 70, "this is a bug": sources.py imported the REST stack. It verifies, with
    requests, urllib3 and tenacity unimportable."""
    proc = _child(
        "missing", "requests,urllib3,tenacity", mini / LAUNCHER,
        "--mrconso", MINI_MRCONSO, "--out", tmp_path / "out", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["outcome"] == "verified"
    assert len(outputs(tmp_path / "out")) == 2


def test_a_missing_dependency_is_exit_2_with_the_reinstall(mini: Path, tmp_path: Path) -> None:
    """The same install, run against UMLS: exit 2 naming the missing package and how to
    reinstall, not a traceback and exit 70; nothing written, the key nowhere."""
    proc = _child(
        "missing", "requests", mini / LAUNCHER, "--out", tmp_path / "out", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    message = (
        "tempmedbench-synonyms 0.1.0 is installed without a module it needs: No module named "
        "'requests'"
    )
    hint = (
        "reinstall it with its dependencies, from a checkout of its code repository: "
        f"{sys.executable} -m pip install --force-reinstall PATH/TO/THE/CHECKOUT"
    )
    report = json.loads(proc.stdout)
    assert (proc.returncode, report["outcome"], report["message"], report["hint"]) == (
        2, "bad_input", message, hint,
    )  # fmt: skip
    assert proc.stderr.splitlines() == [f"error: {message}", f"hint: {hint}"]
    assert not (tmp_path / "out").exists()
    assert find_secret(CANARY_KEY, texts={"stdout": proc.stdout, "stderr": proc.stderr},
                       folders=[tmp_path]) == []  # fmt: skip


def test_without_the_package_the_advice_leads_with_the_checkout(mini: Path, tmp_path: Path) -> None:
    """The advice named a PyPI project that does not exist (trust audit 28): whoever
    registered it would have had their code installed. It names the checkout only."""
    proc = _child("missing", "tempmedbench_synonyms", mini / LAUNCHER, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == _install_message(NOT_INSTALLED)
    assert "tempmedbench-synonyms>=" not in launcher_bytes().decode("utf-8")


def test_the_launcher_run_through_a_symlink_finds_its_own_release(
    mini: Path, tmp_path: Path
) -> None:
    """A link to it elsewhere (``~/bin/sub/regen.py``) took ``~/bin`` for the release:
    "MANIFEST.sha256 is missing". The release is the folder of the file the link names."""
    link = tmp_path / "bin" / "sub" / "regen.py"
    link.parent.mkdir(parents=True)
    link.symlink_to(mini / LAUNCHER)
    proc = _launch(link, "--mrconso", MINI_MRCONSO, "--out", "out", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["outcome"], report["release"]) == ("verified", str(mini))


def test_an_install_older_than_the_hold_still_runs(mini: Path, tmp_path: Path) -> None:
    """A 0.1.0 installed before runtime.hold_interrupts existed: run as before, unheld."""
    fake = tmp_path / "fake" / "tempmedbench_synonyms"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "0.1.0"\n', encoding="utf-8")
    (fake / "runtime.py").write_text("", encoding="utf-8")
    (fake / "cli.py").write_text(
        "import sys\n\ndef script_regenerate_main():\n    print(sys.argv)\n    sys.exit(5)\n",
        encoding="utf-8",
    )
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(fake.parent)}
    proc = _launch(
        mini / LAUNCHER, "--out", "o", cwd=tmp_path, python=(sys.executable, "-S"), env=env
    )
    assert (proc.returncode, proc.stderr) == (5, "")
    assert proc.stdout == f"{['tempmedbench-regenerate-synonyms', str(mini), '--out', 'o']}\n"
