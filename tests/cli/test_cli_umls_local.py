"""The ``umls`` commands from the user's own UMLS files (SPEC 12: ``--meta``, ``--mrconso``,
``--index-dir``, ``umls index``), through CliRunner over the invented ``fixtures/umls`` META
copied into a fresh folder, its index in another: every command's found, not found and bad
input, a file the META lacks, the release rule, the options a local run ignores, the dry run.
No key, and nothing is sent (any request fails the test).

Every expected value is read off the invented RRF rows by hand (quoted beside it)."""

from __future__ import annotations

import json
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import responses
from typer.testing import CliRunner, Result

from helpers import FIXTURES, wait_until
from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli.umls import umls_app

FILES = FIXTURES / "umls"


@pytest.fixture(autouse=True)
def no_network() -> Iterator[None]:
    with responses.RequestsMock():  # a request would fail: nothing is registered
        yield


@pytest.fixture
def meta(tmp_path: Path) -> Path:
    """The invented META under a folder that names its release, 2099AA."""
    folder = tmp_path / "2099AA" / "META"
    shutil.copytree(FILES, folder, ignore=shutil.ignore_patterns("README.md"))
    return folder


def run(args: list[Any], tmp_path: Path) -> Result:
    env = {"TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"), "UMLS_API_KEY": None,
           "UMLS_API_KEY_FILE": None,
           "TEMPMEDBENCH_INDEX_DIR": str(tmp_path / "index")}  # fmt: skip
    return CliRunner().invoke(umls_app, [str(a) for a in args], env=env)


def lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def where(meta: Path, tmp_path: Path, index_dir: str = "index") -> str:
    """What ``source`` names: the index of ``meta``."""
    from tempmedbench_synonyms.mrconso.index import LocalIndex

    index = LocalIndex(meta, index_dir=tmp_path / index_dir)
    try:
        return index.where
    finally:
        index.close()


#: Each command with a found input, one not found and one bad, and what the found one gives
#: (a key of each result, in order).
COMMANDS = {
    # MRCONSO.RRF: "zephyr" and "fever" are words of C9000001's atoms only
    "search": (["search", "zephyr fever", "nosuchword", " "], "ui", ["C9000001"]),
    # MSH D990091 is an atom of C9000091 (named by its SNOMEDCT_US PT "Wind fever")
    "cuis": (["cuis", "MSH", "D990091", "D999999", ".."], "ui", ["C9000091"]),
    # C9000090 holds MSH D990090, NCI C990090, SCTSPA 9990191001 (MTH's NOCODE is no code)
    "crosswalk": (["crosswalk", "SNOMEDCT_US", "9990191001", "123", ".."], "ui",
                  ["D990090", "C990090", "9990191001"]),
    # MRDEF.RRF: C9000090's MSH and NCI definitions (the obsolete NCI one left out)
    "definitions": (["definitions", "C9000090", "C9000002", "XYZ"], "rootSource", ["MSH", "NCI"]),
    # MRREL.RRF: the rows whose CUI2 is C9000001 but R90000011 (SUPPRESS O), by RUI
    "relations": (["relations", "C9000001", "C0000001", "XYZ"], "ui",
                  ["R90000002", "R90000008", "R90000010"]),
    # MRSTY.RRF: C9000001 is T901 and T902
    "semantic-types": (["semantic-types", "C9000001", "C0000001", "XYZ"], "name",
                       ["Invented Disorder", "Invented Weather Finding"]),
    "source-concept": (["source-concept", "SNOMEDCT_US", "9990101009", "123", ".."], "ui",
                       ["9990101009"]),
    # MRHIER.RRF: A9000011's PTR A9000901.A9000911: 9990192008 (1), then 9990191001 (2)
    "hierarchy": (["hierarchy", "SNOMEDCT_US", "9990101009", "123", "..", "--ancestors"], "ui",
                  ["9990192008", "9990191001"]),
    "concept": (["concept", "C9000001", "C0000001", "XYZ"], "ui", ["C9000001"]),
    # C9000001's English SNOMEDCT_US atoms with SUPPRESS N, in file order
    "atoms": (["atoms", "C9000001", "C0000001", "XYZ", "--sab", "SNOMEDCT_US"], "ui",
              ["A9000011", "A9000012", "A9000013"]),
    "source": (["source", "SNOMEDCT_US", "9990101009", "123", ".."], "ui",
               ["A9000011", "A9000012", "A9000013"]),
    "atom": (["atom", "A9000014", "A0000001", "XYZ"], "ui", ["A9000014"]),  # obsolete, but asked
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_answers_found_not_found_and_bad_input_from_the_files(
    meta: Path, tmp_path: Path, command: str
) -> None:
    args, key, found = COMMANDS[command]
    result = run([*args, "--meta", meta, "--json", "-q"], tmp_path)
    assert (result.exit_code, result.stderr.count("error: ")) == (2, 1), result.stderr
    docs = lines(result)
    given = [a for a in args[1:] if not a.startswith("--") and a != "SNOMEDCT_US" and a != "MSH"]
    assert [(d["outcome"], d["exit_code"]) for d in docs] == [
        ("found", 0), ("not_found", 1), ("bad_input", 2)
    ]  # fmt: skip
    assert [d["input"].rpartition(" ")[2] for d in docs] == [g.rpartition(" ")[2] for g in given]
    assert [r[key] for r in docs[0]["results"]] == found
    source = where(meta, tmp_path)
    assert {(d["release"], d["source"], d["warnings"] == []) for d in docs} == {
        ("2099AA", source, True)
    }  # fmt: skip
    assert not (tmp_path / "cache").exists()  # nothing cached: nothing was asked of UTS


def test_sources_are_mrsabs_and_without_it_one_a_source_of_mrconso(
    meta: Path, tmp_path: Path
) -> None:
    result = run(["sources", "--meta", meta, "--json"], tmp_path)
    assert result.exit_code == 0, result.stderr
    (doc,) = lines(result)
    # MRSAB.RRF: 12 rows, SNOMEDCT_US's 2098 version not current (CURVER N)
    assert [s["abbreviation"] for s in doc["results"]] == [
        "HL7V3.0", "LNC", "LNC-DE-DE", "MDR", "MSH", "MSHGER", "MTH", "NCI", "RXNORM", "SCTSPA",
        "SNOMEDCT_US",
    ]  # fmt: skip
    alone = run(["sources", "--mrconso", meta / "MRCONSO.RRF", "--json"], tmp_path)
    (doc,) = lines(alone)
    # MRCONSO.RRF: one a SAB its rows have, by SAB (the same eleven)
    assert [s["abbreviation"] for s in doc["results"]] == [
        "HL7V3.0", "LNC", "LNC-DE-DE", "MDR", "MSH", "MSHGER", "MTH", "NCI", "RXNORM", "SCTSPA",
        "SNOMEDCT_US",
    ]  # fmt: skip
    assert doc["results"][0]["contextType"] is None  # not in MRCONSO.RRF


def test_one_input_says_uts_words_over_the_files(meta: Path, tmp_path: Path) -> None:
    assert run(["concept", "C9000001", "--meta", meta, "-q"], tmp_path).exit_code == 0  # built
    missing = run(["concept", "C0000001", "--meta", meta], tmp_path)
    assert (missing.exit_code, missing.stdout) == (1, "")
    assert missing.stderr == (
        "UMLS 2099AA has no concept C0000001\n"
        "hint: check the CUI (C and 7 digits, such as C0020538)\n"
    )
    cut = run(["search", "fever", "--meta", meta, "--limit", "1", "--json"], tmp_path)
    (doc,) = lines(cut)
    # "fever": a word of C9000001's and C9000091's atoms; the first by UI
    assert (doc["truncated"], [r["ui"] for r in doc["results"]], doc["message"]) == (
        True, ["C9000001"], "1 result for words search for 'fever', UMLS 2099AA; --limit 1 cut it"
    )  # fmt: skip
    # --language is local only: FRE atoms of "fièvre" (A9000017, C9000001)
    french = run(["search", "Fièvre", "--language", "FRE", "--meta", meta, "--json"], tmp_path)
    (doc,) = lines(french)
    assert [r["ui"] for r in doc["results"]] == ["C9000001"]


def test_a_file_the_meta_lacks_is_bad_input_naming_it(meta: Path, tmp_path: Path) -> None:
    mrconso = meta / "MRCONSO.RRF"
    result = run(["definitions", "C9000001", "--mrconso", mrconso], tmp_path)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {mrconso}: umls definitions needs MRDEF.RRF, and it holds none\n"
        "hint: give --meta the META folder (or release zip) that holds MRDEF.RRF\n"
    )
    (meta / "MRSTY.RRF").unlink()
    typed = run(["search", "fever", "--semantic-types", "T901", "--meta", meta, "--json"],
                tmp_path)  # fmt: skip
    (doc,) = lines(typed)
    assert (typed.exit_code, doc["outcome"], doc["message"]) == (
        2, "bad_input", f"{meta}: umls search --semantic-types needs MRSTY.RRF, and it holds none"
    )  # fmt: skip
    plain = run(["search", "fever", "--meta", meta, "-q"], tmp_path)
    assert plain.exit_code == 0, plain.stderr  # a search needs MRCONSO.RRF alone


def test_meta_and_mrconso_together_are_bad_input(meta: Path, tmp_path: Path) -> None:
    result = run(["concept", "C9000001", "--meta", meta, "--mrconso", meta / "MRCONSO.RRF"],
                 tmp_path)  # fmt: skip
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: --meta and --mrconso contradict each other: give one\n"
        "hint: --meta PATH takes a META folder or a release zip; --mrconso PATH one MRCONSO.RRF "
        "(a META of it alone)\n"
    )


def test_a_meta_path_that_is_not_there_is_bad_input_saying_what_meta_takes(
    tmp_path: Path,
) -> None:
    result = run(["concept", "C9000001", "--meta", tmp_path / "nope"], tmp_path)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {tmp_path / 'nope'}: no such file or folder\n"
        "hint: --meta takes a META folder as NLM ships it, or what holds one: the release folder, "
        "umls-2025AB-metathesaurus-full.zip, 2025ab-1-meta.nlm or umls-2025AB-full.zip\n"
    )
    assert not (tmp_path / "index").exists()


def test_an_index_dir_that_is_a_file_is_bad_input_saying_so(meta: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    result = run(["concept", "C9000001", "--meta", meta, "--index-dir", tmp_path / "afile"],
                 tmp_path)  # fmt: skip
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {tmp_path / 'afile'}: cannot use the index folder: Not a directory\n"
        "hint: a part of the path is a file where a folder is expected; --index-dir or "
        "TEMPMEDBENCH_INDEX_DIR\n"
    )
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "x"


def test_the_network_options_are_ignored_and_said_once(
    meta: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    args = ["concept", "C9000001", "C9000002", "--meta", meta, "--rate", "99", "--offline",
            "--workers", "2", "--base-url", "http://127.0.0.1:9/rest", "--api-key-file",
            tmp_path / "none", "--json"]  # fmt: skip
    with caplog.at_level(logging.WARNING):
        result = run(args, tmp_path)
    assert result.exit_code == 0, result.stderr
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "--base-url, --offline, --rate, --workers, --api-key-file only apply to the UMLS REST "
        "API: ignored with --meta"
    ]
    # links go to UTS whatever --base-url says
    assert lines(result)[0]["results"][0]["atoms"] == (
        "https://uts-ws.nlm.nih.gov/rest/content/2099AA/CUI/C9000001/atoms"
    )


def test_the_release_is_the_one_the_path_names(meta: Path, tmp_path: Path) -> None:
    other = run(["concept", "C9000001", "--meta", meta, "--umls-release", "2098AA"], tmp_path)
    assert (other.exit_code, other.stdout) == (2, "")
    assert other.stderr == (
        f"error: {meta}: --umls-release 2098AA is not the release its names say, 2099AA\n"
        "hint: leave --umls-release out (current: the files' own), or give 2099AA\n"
    )
    same = run(["concept", "C9000001", "--meta", meta, "--umls-release", "2099AA", "-q"],
               tmp_path)  # fmt: skip
    assert same.exit_code == 0
    unnamed = tmp_path / "mine" / "META"
    shutil.copytree(meta, unnamed)
    # no name says it: null, and links in current; a crosswalk needs no --umls-release
    walked = run(["crosswalk", "SNOMEDCT_US", "9990191001", "--meta", unnamed, "--json"],
                 tmp_path)  # fmt: skip
    (doc,) = lines(walked)
    assert (walked.exit_code, doc["release"], doc["results"][0]["atoms"]) == (
        0, None, "https://uts-ws.nlm.nih.gov/rest/content/current/source/MSH/D990090/atoms"
    )  # fmt: skip
    named = run(["crosswalk", "SNOMEDCT_US", "9990191001", "--meta", unnamed, "--umls-release",
                 "2097AB", "--json"], tmp_path)  # fmt: skip
    (doc,) = lines(named)
    assert (doc["release"], doc["results"][0]["atoms"]) == (
        "2097AB", "https://uts-ws.nlm.nih.gov/rest/content/2097AB/source/MSH/D990090/atoms"
    )  # fmt: skip


def test_a_dry_run_names_the_files_and_builds_nothing(meta: Path, tmp_path: Path) -> None:
    args = ["crosswalk", "SNOMEDCT_US", "9990191001", "..", "--meta", meta, "--dry-run", "--json"]
    cold = run(args, tmp_path)
    assert cold.exit_code == 0, cold.stderr
    line = (
        f"dry run: 2 inputs: answered from {where(meta, tmp_path)} (UMLS 2099AA); MRCONSO.RRF to "
        "index, MRHIER.RRF to index, MRREL.RRF to index; nothing is sent"
    )
    assert lines(cold) == [{
        "outcome": "planned", "exit_code": 0, "message": line,
        "plan": {"inputs": 2, "bad_input": 1, "seconds": None,
                 "files": {"MRCONSO": False, "MRHIER": False, "MRREL": False}},
        "schema_version": 1, "tool_version": __version__,
    }]  # fmt: skip
    assert cold.stderr == line + "\n"
    assert (
        run(["crosswalk", "SNOMEDCT_US", "9990191001", "--meta", meta, "-q"], tmp_path).exit_code
        == 0
    )
    warm = run(args, tmp_path)
    assert lines(warm)[0]["plan"]["files"] == {"MRCONSO": True, "MRHIER": True, "MRREL": True}


def test_umls_index_builds_every_part_ahead(meta: Path, tmp_path: Path) -> None:
    result = run(["index", meta, "--index-dir", tmp_path / "ahead", "--json"], tmp_path)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)  # one JSON object
    assert (doc["index"], doc["release"]) == (where(meta, tmp_path, "ahead"), "2099AA")
    # the rows of each invented file (wc -l)
    assert {p["file"]: p["rows"] for p in doc["parts"]} == {
        "MRCONSO": 71, "MRDEF": 4, "MRREL": 13, "MRSTY": 14, "MRHIER": 6, "MRSAB": 12,
    }  # fmt: skip
    assert all(p["bytes"] > 0 and p["seconds"] >= 0 for p in doc["parts"])
    dry = run(["definitions", "C9000090", "--meta", meta, "--index-dir", tmp_path / "ahead",
               "--dry-run", "--json"], tmp_path)  # fmt: skip
    assert lines(dry)[0]["plan"]["files"] == {"MRCONSO": True, "MRDEF": True}


def test_umls_index_of_a_path_with_no_mrconso_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = run(["index", tmp_path / "empty", "--json"], tmp_path)
    assert (result.exit_code, json.loads(result.stdout)["outcome"]) == (2, "bad_input")
    assert result.stderr.startswith(f"error: {tmp_path / 'empty'}")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_stops_a_long_query_at_once(tmp_path: Path) -> None:
    """A search whose one statement runs for seconds (5,000 tree numbers asked, each compared
    with each of 3,000 invented semantic types' before the first atom is checked: none is
    under any): Ctrl-C ends it at once, exit 130, its message alone, and the index as it was.
    "At once" on the child's own clock, its CPU seconds (a busy machine stretches wall time,
    not these): the whole search takes 5.7, and after the Ctrl-C it spends less than one."""
    meta = tmp_path / "2099AA" / "META"
    meta.mkdir(parents=True)
    fields = "C9000001|ENG|P|L{n}|PF|S{n}|Y|A{n}||||S|PT|{n}|fever {n}|0|N|256|"
    many = range(1000000, 1003000)
    (meta / "MRCONSO.RRF").write_text("".join(fields.format(n=n) + "\n" for n in many))
    (meta / "MRSTY.RRF").write_text("".join(f"C9000001|T{n}|B{n}|X|AT{n}||\n" for n in many))
    from tempmedbench_synonyms.mrconso.index import LocalIndex

    index = LocalIndex(meta, index_dir=tmp_path / "index")
    index.build()  # (built here: the command only answers)
    index.close()
    built = sorted(p.name for p in (tmp_path / "index").iterdir())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "TEMPMEDBENCH_"))}
    env.update(TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"),
               TEMPMEDBENCH_INDEX_DIR=str(tmp_path / "index"))  # fmt: skip
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # (ended children: this one next)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from tempmedbench_synonyms.cli import main; main()", "umls",
         "search", "fever", "--semantic-types", ",".join(f"B{n}.9" for n in range(5000)),
         "--meta", str(meta)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip

    def cpu() -> float:  # the child's seconds of CPU (its start takes less than 0.2)
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    try:
        wait_until(lambda: proc.poll() is not None or cpu() >= 0.5, "the query to run")
        assert proc.poll() is None, "the query ended before Ctrl-C: make it longer"
        at_signal = cpu()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # a hang bound; its speed is the CPU's below
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = sum(getattr(ended, f) - getattr(children, f) for f in ("ru_utime", "ru_stime"))
        assert spent - at_signal < 1.0, f"{spent - at_signal:.2f} CPU s after the Ctrl-C"
    finally:
        proc.kill()
        proc.communicate()
    interrupted = "interrupted: nothing was left half-written; run the same command again\n"
    assert (proc.returncode, out, err.decode()) == (130, b"", interrupted)
    assert sorted(p.name for p in (tmp_path / "index").iterdir()) == built
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    "command", [["crosswalk", "SNOMEDCT_US", "9990191001"], ["search", "fever"]]
)
def test_a_local_run_imports_neither_pydantic_nor_the_rest_stack(
    meta: Path, tmp_path: Path, command: list[str]
) -> None:
    """What a local answer never uses is never imported: a run's fixed cost is mostly imports
    (issue 24: typer's pydantic adapters alone were ~60 ms of a one-input run's ~95)."""
    code = (
        "import sys\n"
        "from tempmedbench_synonyms.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as done:\n"
        "    print(done.code, sorted(m for m in ('pydantic', 'requests', 'urllib3', 'tenacity')"
        " if m in sys.modules), file=sys.stderr)\n"
    )
    args = ["umls", *command, "--meta", str(meta), "--json", "-q"]
    env = {**os.environ, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "TEMPMEDBENCH_INDEX_DIR": str(tmp_path / "index")}  # fmt: skip
    env.pop("UMLS_API_KEY", None)
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip
    assert done.stderr == "0 []\n"
    assert [line["outcome"] for line in map(json.loads, done.stdout.splitlines())] == ["found"]
