"""Every command and Python example of the README (and every command of docs/reference.md) runs,
as written, against the invented fixtures, so that the docs cannot rot; the README's sample
report is the one a run prints; docs/architecture.md's module map names every module and no other.

The README's examples name a real-looking release folder, MRCONSO.RRF and GPS zip; here those
paths hold the invented fixtures, the UTS is the loopback fake, and the few real identifiers and
terms the README shows (SPEC section 2's example, a SNOMED CT code, a term) are swapped for the
fixture's invented ones that play them (``INVENTED``).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

import tempmedbench_synonyms
from helpers import ROOT
from tempmedbench_synonyms import about
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, FakeUtsServer

BIN = Path(sys.executable).parent
README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "reference.md"
GPS_ZIP = "SnomedINTL_GPSRelease_PRODUCTION_20260101T120000Z.zip"
#: The real identifiers and terms the docs show (SPEC section 2's example, a SNOMED CT code and a
#: term a user would ask for), each swapped for the invented one of fixtures/umls that plays it.
INVENTED = {
    "C0020538": "C9000001",
    "38341003": "9990101009",
    "A3220484": "A9000011",
    "22298006": "9990191001",
    "ICD10CM": "MSH",
    "heart attack": "zephyr fever",
}
#: The input files the README's batches name, with invented inputs (one found, one not).
BATCH_FILES = {
    "terms.txt": "zephyr fever\nglimmer pox\n\nvelvet cough\n",
    "codes.tsv": "SNOMEDCT_US\t9990191001\nSNOMEDCT_US\t9990192008\n",
}


def doc_commands(path: Path = README) -> list[str]:
    """The lines of a doc's indented code blocks (four spaces), in order; fenced blocks (the
    Python examples, sample output) are not commands."""
    commands, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"    \S", line):
            commands.append(line[4:])
    return commands


def readme_commands() -> list[str]:
    return doc_commands(README)


def test_the_quick_start_is_exactly_make_demo_and_make_test() -> None:
    assert readme_commands()[:2] == ["make demo", "make test"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "make test" in ci and "make demo" in ci  # CI runs both, on a fresh machine


def run_doc_commands(tmp_path: Path) -> list[tuple[str, subprocess.CompletedProcess[str]]]:
    """Run every command of the README (after the quick start) and of docs/reference.md, in
    order, in ``tmp_path`` laid out as the docs assume (a release folder, a key file, a
    2025AB/META/MRCONSO.RRF, a GPS zip, the batch files), against the fake UTS serving the
    invented fixtures/umls files; each must exit 0 and never show the key."""
    shutil.copytree(ROOT / "fixtures" / "tempmedbench-mini", tmp_path / "TempMedBench-1.0")
    shutil.copytree(ROOT / "fixtures" / "tempmedbench-mini", tmp_path / "my-release")
    key_file = tmp_path / "home/.config/umls/key"
    key_file.parent.mkdir(parents=True)
    key_file.write_text(CANARY_KEY + "\n", encoding="utf-8")
    key_file.chmod(0o600)
    shutil.copytree(ROOT / "fixtures/umls", tmp_path / "2025AB/META")
    with zipfile.ZipFile(tmp_path / GPS_ZIP, "w", zipfile.ZIP_DEFLATED) as z:
        gps = ROOT / "fixtures/gps/SnomedINTL_GPSRelease_PRODUCTION_20990101T120000Z.txt"
        z.write(gps, f"SnomedCT_GPS/{gps.name}")
    for name, text in BATCH_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    fake = FakeUts(FakeUtsData.from_meta(ROOT / "fixtures/umls"), api_key=CANARY_KEY)
    env = {k: v for k, v in os.environ.items() if "PROXY" not in k.upper()}
    env.update(TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"), NO_PROXY="127.0.0.1")
    env.pop("UMLS_API_KEY", None)
    ran: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    with FakeUtsServer(fake) as server:
        env["UMLS_BASE_URL"] = server.base_url
        for line in readme_commands()[2:] + doc_commands(REFERENCE):
            words = shlex.split(line, comments=True)
            if words[0] == "read":
                # The key typed in, unseen: the test types the canary.
                assert words == ["read", "-rs", "UMLS_API_KEY", "&&", "export", "UMLS_API_KEY"]
                env["UMLS_API_KEY"] = CANARY_KEY
                continue
            words = [str(key_file) if w == "~/.config/umls/key" else w for w in words]
            words = [INVENTED.get(w, w) for w in words]
            stdout = None
            if len(words) > 2 and words[-2] == ">":  # the one redirection the docs use
                stdout, words = tmp_path / words[-1], words[:-2]
            assert words[0].startswith("tempmedbench-"), line
            assert not {"<", ">", "|", ";", "&&"} & set(words), line
            given = env
            if "--api-key-file" in words:  # the key must come from the file, not the variable
                given = {k: v for k, v in env.items() if k != "UMLS_API_KEY"}
            proc = subprocess.run(
                [str(BIN / words[0]), *words[1:]],
                cwd=tmp_path,
                env=given,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert proc.returncode == 0, f"{line}\n{proc.stderr}"
            assert CANARY_KEY not in proc.stdout + proc.stderr
            if stdout is not None:
                stdout.write_text(proc.stdout, encoding="utf-8")
            ran.append((line, proc))
    return ran


def test_every_command_of_the_docs_runs(tmp_path: Path) -> None:
    ran = run_doc_commands(tmp_path)
    # Every command line the docs show was run (read again here, without doc_commands, so that
    # a line the parser or the loop skipped fails the test), and there are some.
    pattern = re.compile(r"^    (tempmedbench-\S.*)$", flags=re.MULTILINE)
    shown = [
        line for doc in (README, REFERENCE) for line in pattern.findall(doc.read_text("utf-8"))
    ]
    assert [line for line, _ in ran] == shown != []
    # The README teaches, and so runs, each of these.
    taught = [
        "doctor", "regenerate-synonyms", "--dry-run", "--mrconso", "umls search", "umls cuis",
        "umls crosswalk", "--meta", "--file", "--json", "gps validate",
    ]  # fmt: skip
    assert [t for t in taught if not any(t in line for line, _ in ran)] == []
    # the REST run and the MRCONSO run both verified the release in place
    assert (tmp_path / "TempMedBench-1.0/question_surface/question_surface_synonym.jsonl").exists()
    # the batch's JSON Lines: one object an input, in input order (the blank line skipped)
    assert [line for line, _ in ran if line.endswith("> answers.jsonl")] != []
    answers = [json.loads(x) for x in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert [(a["input"], a["outcome"]) for a in answers] == [
        ("zephyr fever", "found"), ("glimmer pox", "found"), ("velvet cough", "found"),
    ]  # fmt: skip
    # the report the README shows is the one a REST run of the invented release prints
    [sample] = [b for b in readme_blocks("text") if b.startswith("regenerate: TempMedBench-1.0")]
    first = dict(reversed(ran))  # each line's first run
    first_rest_run = first["tempmedbench-regenerate-synonyms TempMedBench-1.0"].stderr
    assert first_rest_run[first_rest_run.index("regenerate: TempMedBench-1.0") :] == sample


def readme_blocks(kind: str) -> list[str]:
    """The README's fenced blocks of one kind (``python``, ``text``)."""
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{kind}\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def readme_python() -> list[str]:
    """The README's fenced Python blocks."""
    return readme_blocks("python")


def readme_script(code: str, folder: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    """Run a README Python block as a script in ``folder``, with a copy of ``fixtures/`` (and its
    temporary files in ``folder/tmp``), and the environment ``variables`` besides."""
    shutil.copytree(ROOT / "fixtures", folder / "fixtures")
    env = {k: v for k, v in os.environ.items() if "PROXY" not in k.upper()}
    env.update(NO_PROXY="127.0.0.1", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    env.update(TMPDIR=str(folder / "tmp"))
    (folder / "tmp").mkdir()
    env.pop("UMLS_API_KEY", None)
    env.update(variables)
    return subprocess.run(
        [str(BIN / "python"), "-c", code],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_nothing_left(folder: Path) -> None:
    """``readme_script`` left ``folder`` as it made it: the copy of fixtures/ unchanged, TMPDIR
    empty, nothing else (but the suite's shared rate state, conftest: tmp_path/state)."""
    assert sorted(p.name for p in folder.iterdir() if p.name != "state") == ["fixtures", "tmp"]
    assert list((folder / "tmp").iterdir()) == []

    def files(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*"))

    assert files(folder / "fixtures") == files(ROOT / "fixtures")


def test_every_readme_python_block_is_run_by_a_test() -> None:
    blocks = readme_python()
    kinds = [
        [b.startswith("# test_"), "FakeUtsServer" in b, "ensure_synonyms" in b, "Umls(" in b]
        for b in blocks
    ]
    assert kinds == [
        [False, False, False, True],
        [False, False, True, False],
        [False, True, False, False],
        [True, False, False, False],
        [True, False, False, False],
    ]


def test_the_readme_umls_example_runs_against_the_fake(tmp_path: Path) -> None:
    """As a user runs it against UTS, with the key in UMLS_API_KEY: here the fake UTS serves
    the invented fixtures/umls files, and the README's real term and codes are swapped for the
    invented ones that play them (INVENTED)."""
    [code] = [block for block in readme_python() if "Umls(" in block]
    for real, invented in INVENTED.items():
        code = code.replace(f'"{real}"', f'"{invented}"')
    fake = FakeUts(FakeUtsData.from_meta(ROOT / "fixtures/umls"), api_key=CANARY_KEY)
    with FakeUtsServer(fake) as server:
        proc = readme_script(
            code, tmp_path, UMLS_BASE_URL=server.base_url, UMLS_API_KEY=CANARY_KEY,
            TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "tmp" / "cache"),
        )  # fmt: skip
    assert (proc.returncode, proc.stderr) == (0, "")
    # fixtures/umls/MRCONSO.RRF: C9000001 "Zephyr fever"; the MSH code of C9000090
    assert proc.stdout == (
        "C9000001 Zephyr fever\n"
        "MSH D990090 Meteoric Disorders\n"
        "zephyr fever found 1\n"
        "no such term not_found 0\n"
    )
    assert CANARY_KEY not in proc.stdout
    shutil.rmtree(tmp_path / "tmp" / "cache")
    assert_nothing_left(tmp_path)


def test_the_readme_api_example_runs(tmp_path: Path) -> None:
    [code] = [block for block in readme_python() if "ensure_synonyms" in block]
    proc = readme_script(code, tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0,
        "question_surface_synonym.jsonl\nverified\nTrue\n",
        "",
    )
    # Nothing is left in the folder it ran in (a checkout: no untracked out/), nor in TMPDIR.
    assert_nothing_left(tmp_path)


def test_the_readme_python_example_runs_against_the_fake(tmp_path: Path) -> None:
    [code] = [block for block in readme_python() if "FakeUtsServer" in block]
    users = tmp_path / "users-state"  # the rate state of the user who runs the example
    proc = readme_script(code, tmp_path, TEMPMEDBENCH_STATE_DIR=str(users))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "11 requests\n", "")
    assert not users.exists()  # the fake's port gets no rate state file among the user's
    # 10 concepts in the mini release, and the probe of its UMLS release
    table = json.loads((ROOT / "fixtures/tempmedbench-mini/synonyms/synonym_table_kept.json")
                       .read_text(encoding="utf-8"))  # fmt: skip
    assert len(table["concepts"]) + 1 == 11
    # Nothing is left in the folder it ran in (a checkout: no untracked out/ or cache/), and
    # the temporary folder is gone.
    assert_nothing_left(tmp_path)


def leaf_commands(command: Any = None, words: str = "") -> list[str]:
    """Every command of ``tempmedbench-synonyms`` a user types, as its words after the script
    ("" for the script itself, then "regenerate", ..., "umls search"...), from the Typer app."""
    command = typer.main.get_command(app) if command is None else command
    subs = getattr(command, "commands", None)
    if subs is None:
        return [words]
    found = [""] if not words else []
    for name, sub in subs.items():
        found += leaf_commands(sub, f"{words} {name}".strip())
    return found


def help_of(command: str, columns: int) -> Result:
    """``tempmedbench-synonyms COMMAND --help`` on a terminal ``columns`` wide, in this process:
    the text the installed script prints (a subprocess apiece took a quarter of a second and
    showed the same bytes; ``test_both_scripts_and_the_module_print_the_version`` runs it)."""
    return CliRunner().invoke(
        app,
        [*command.split(), "--help"],
        env={"COLUMNS": str(columns)},
        prog_name="tempmedbench-synonyms",
    )


@pytest.mark.parametrize("command", leaf_commands())
def test_every_command_has_help_with_an_example(command: str) -> None:
    proc = help_of(command, 200)
    assert proc.exit_code == 0
    assert "Example" in proc.stdout, proc.stdout
    # Flags take no value, so --help must not show one (Typer would print "--offline <bool>"),
    # not even for the flags Typer adds itself (-h, --install-completion).
    shown = [line for line in proc.stdout.splitlines() if "<bool>" in line or "<int>" in line]
    assert [line for line in shown if "<bool>" in line] == [], shown
    # Arguments are named as they are typed (RELEASE, SCTID...), not {release}.
    usage = next(line for line in proc.stdout.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage
    assert not [line for line in shown if "--verbose" in line], shown


def test_both_scripts_and_the_module_print_the_version() -> None:
    for argv in (
        [str(BIN / "tempmedbench-synonyms"), "--version"],
        [str(BIN / "tempmedbench-regenerate-synonyms"), "--version"],
        [str(BIN / "python"), "-m", "tempmedbench_synonyms", "--version"],
    ):
        env = {**os.environ, "TEMPMEDBENCH_CACHE_DIR": "/somewhere/cache"}
        proc = subprocess.run(argv, capture_output=True, text=True, env=env)
        assert (proc.returncode, proc.stderr) == (0, ""), argv
        tool, python, libraries, inflate, cache = proc.stdout.splitlines()
        assert tool == f"tempmedbench-synonyms {tempmedbench_synonyms.__version__}"
        assert python == (
            f"Python {platform.python_version()} ({platform.python_implementation()}) "
            f"on {platform.system()}"
        )
        assert libraries == ", ".join(
            f"{name} {metadata.version(name)}"
            for name in ("requests", "tenacity", "pydantic", "typer", "platformdirs")
        )
        assert inflate == about.inflate_text()  # isal's line, or zlib's where isal has no wheels
        assert cache == "cache folder: /somewhere/cache"


#: The key of a user who followed the README (``UMLS_API_KEY_FILE`` in their shell profile):
#: invented, and never to reach the fake.
USERS_KEY = "0a1b2c3d-0000-4000-8000-00000000cafe"


@pytest.mark.parametrize(
    ("name", "form"),
    [
        ("test_my_pipeline.py", "as written"),
        ("test_my_pipeline.py", "merged with os.environ"),
        ("test_my_umls_code.py", "as written"),
    ],
)
def test_the_readme_pytest_examples_pass_with_the_plugin(
    tmp_path: Path, name: str, form: str
) -> None:
    """As a user who set every variable the README mentions in their profile runs them: their
    key file, base URL, cache and state folders and log level are all left aside, in the
    subprocess and in the test's process, whether the example passes ``fake_uts.env`` or the
    form earlier READMEs showed, ``{**os.environ, **fake_uts.env}``. The second example is a
    user's test of their own UMLS code against the fixture."""
    [code] = [block for block in readme_python() if block.startswith(f"# {name}\n")]
    if form != "as written":
        assert "env=fake_uts.env," in code
        code = code.replace("env=fake_uts.env,", "env={**os.environ, **fake_uts.env},")
        code = code.replace("import subprocess", "import os, subprocess")
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    (tmp_path / name).write_text(code, encoding="utf-8")
    home = tmp_path / "home"
    key_file = home / ".config/umls/key"
    key_file.parent.mkdir(parents=True)
    key_file.write_text(USERS_KEY + "\n", encoding="utf-8")
    key_file.chmod(0o600)
    env = {
        k: v
        for k, v in os.environ.items()
        if "PROXY" not in k.upper() and not k.startswith(("UMLS_", "TEMPMEDBENCH_", "XDG_"))
    }
    env.update(NO_PROXY="127.0.0.1", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
               PYTHONDONTWRITEBYTECODE="1", HOME=str(home), UMLS_API_KEY_FILE=str(key_file),
               UMLS_BASE_URL="https://uts.invalid/rest", TEMPMEDBENCH_LOG_LEVEL="debug",
               TEMPMEDBENCH_CACHE_DIR=str(home / "cache"),
               TEMPMEDBENCH_STATE_DIR=str(home / "state"))  # fmt: skip
    proc = subprocess.run(
        [str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("1 passed in ")
    # the run wrote where the test said (its tmp_path) and in the fixture's own folders, not in
    # the folder it ran from, nor in the user's folders
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["fixtures", "home", name])
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == [
        ".config", ".config/umls", ".config/umls/key",
    ]  # fmt: skip
    assert USERS_KEY not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("", ["tempmedbench-synonyms regenerate TempMedBench-1.0 \\",
              "--mrconso 2025AB/META/MRCONSO.RRF"]),
        ("regenerate", ["tempmedbench-regenerate-synonyms TempMedBench-1.0 \\",
                        "--mrconso 2025AB/META/MRCONSO.RRF"]),
        ("freeze", ["tempmedbench-synonyms freeze my-release \\",
                    "--mrconso 2025AB/META/MRCONSO.RRF --update-manifest"]),
        ("gps validate", ["tempmedbench-synonyms gps validate TempMedBench-1.0 \\",
                          "--gps SnomedCT_GPS.zip"]),
        ("umls source", ["tempmedbench-synonyms umls source SNOMEDCT_US 38341003"]),
        ("umls atom", ["tempmedbench-synonyms umls atom A3220484 --json"]),
    ],
)  # fmt: skip
def test_help_examples_are_not_wrapped_mid_command_at_80_columns(
    command: str, example: list[str]
) -> None:
    # Every line of an example (a long one is continued with a backslash) stands whole on one
    # line of an 80-column terminal, so that it can be copied and pasted as it is.
    lines = [line.strip() for line in help_of(command, 80).stdout.splitlines()]
    start = lines.index("Example:")
    assert [line for line in lines[start + 1 :] if line][: len(example)] == example


def test_the_module_map_names_every_module_and_no_other() -> None:
    # docs/architecture.md's module map names each module of the package in its own words, so
    # a module added without a line there fails here, and so does a line naming a module that
    # is gone; the README keeps no map of its own.
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## The module map") :]
    package = ROOT / "src" / "tempmedbench_synonyms"
    modules = sorted(
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py") or p.parent.name == "cli"
    )
    missing = [m for m in modules if f"\n{m} " not in section]
    assert missing == []
    assert len(modules) > 60
    named = re.findall(r"^([a-z_]+(?:/[a-z_]+)*\.py(?:\.txt)?)\b", section, flags=re.MULTILINE)
    assert [m for m in named if not (package / m).is_file()] == []
    assert len(named) == len(set(named))  # each module once
    assert "## The module map" not in README.read_text(encoding="utf-8")
    assert not re.search(r"^\S+\.py +\S", README.read_text(encoding="utf-8"), flags=re.MULTILINE)


def test_both_scripts_offer_shell_completion() -> None:
    for script in ("tempmedbench-synonyms", "tempmedbench-regenerate-synonyms"):
        proc = subprocess.run(
            [str(BIN / script), "--help"],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "100"},
        )
        assert proc.returncode == 0
        assert "--install-completion" in proc.stdout and "--show-completion" in proc.stdout
