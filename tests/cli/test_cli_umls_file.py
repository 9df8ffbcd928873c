"""``umls --file`` (``cli.umls``): how many inputs it takes, a line that is not UTF-8, standard
input closed, and a SAB argument beside ``SAB<TAB>CODE`` lines; against the fake UTS serving the
invented ``fixtures/umls`` files (the rows quoted beside each expected value)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from helpers import BASE, FIXTURES, behind_responses
from tempmedbench_synonyms.cli import umls as cli_umls
from tempmedbench_synonyms.cli.umls import umls_app
from tempmedbench_synonyms.lookups import Concept
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, find_secret


@pytest.fixture
def fake() -> Iterator[FakeUts]:
    uts = FakeUts(FakeUtsData.from_meta(FIXTURES / "umls", release="2099AA"), api_key=CANARY_KEY)
    with behind_responses(uts):
        yield uts


def run(args: list[str], tmp_path: Path, *, stdin: str | bytes | None = None) -> Result:
    env = {"UMLS_BASE_URL": BASE, "TEMPMEDBENCH_CACHE_DIR": str(tmp_path / "cache"),
           "UMLS_API_KEY": CANARY_KEY}  # fmt: skip
    return CliRunner().invoke(umls_app, args, env=env, input=stdin)


def lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def no_key(result: Result, tmp_path: Path) -> bool:
    texts = {"stdout": result.stdout, "stderr": result.stderr}
    return find_secret(CANARY_KEY, texts=texts, folders=[tmp_path]) == []


# -- how many inputs ---------------------------------------------------------------------------


def test_a_file_of_more_inputs_than_the_limit_is_refused_where_it_passes_it(
    fake: FakeUts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file under the byte limit may still hold millions of short inputs: past
    ``INPUT_COUNT_MAX`` (here 3) it is bad input, at the line that passes it, before any lookup
    is made; nothing asked, nothing cached. Blank lines do not count."""
    monkeypatch.setattr(cli_umls, "INPUT_COUNT_MAX", 3)
    made: list[str] = []
    monkeypatch.setattr(Concept, "__init__", lambda *a, **k: made.append("x"))
    path = tmp_path / "cuis.txt"
    path.write_text("C9000001\n\nC9000090\n  \nC9000091\nC0000001\nC0000002\n", encoding="utf-8")
    result = run(["concept", "--file", str(path), "--umls-release", "2099AA", "--json"], tmp_path)
    assert result.exit_code == 2
    message = f"{path}, line 6: --file holds more than 3 inputs"
    assert result.stderr == f"error: {message}\nhint: split the inputs into several runs\n"
    (doc,) = lines(result)
    assert (doc["outcome"], doc["message"], doc["input"]) == ("bad_input", message, None)
    assert made == [] and fake.seen == [] and not (tmp_path / "cache").exists()
    piped = run(["concept", "--file", "-", "--umls-release", "2099AA"], tmp_path,
                stdin="C9000001\n" * 4)  # fmt: skip
    assert (piped.exit_code, piped.stderr.splitlines()[0]) == (
        2, "error: -, line 4: --file holds more than 3 inputs"
    )  # fmt: skip
    assert no_key(result, tmp_path) and no_key(piped, tmp_path)


def test_a_file_of_exactly_the_limit_is_answered(
    fake: FakeUts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_umls, "INPUT_COUNT_MAX", 3)
    path = tmp_path / "cuis.txt"
    path.write_text("C9000001\n\nC9000090\nC9000001\n\n", encoding="utf-8")
    result = run(["concept", "--file", str(path), "--umls-release", "2099AA", "--json", "-q"],
                 tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert [d["input"] for d in lines(result)] == ["C9000001", "C9000090", "C9000001"]


# -- a line that is not UTF-8 ------------------------------------------------------------------


def test_a_line_that_is_not_utf8_is_one_bad_input_naming_its_line(
    fake: FakeUts, tmp_path: Path
) -> None:
    """One byte that is not UTF-8 (Latin-1 é, 0xe9, in line 3) spoils its own line only: that
    input is bad input naming the line and the byte, the others are answered."""
    path = tmp_path / "terms.txt"
    path.write_bytes(b"\xef\xbb\xbfwind\n\nfi\xe9vre\nzephyr fever\n")
    result = run(["search", "--file", str(path), "--umls-release", "2099AA", "--json"], tmp_path)
    assert result.exit_code == 2  # the highest of 0, 2, 0
    wind, bad, zephyr = lines(result)
    assert (wind["input"], wind["outcome"]) == ("wind", "found")
    assert (zephyr["input"], zephyr["outcome"]) == ("zephyr fever", "found")
    message = f"{path}, line 3: the line is not UTF-8 text (byte 0xe9 at byte 3)"
    hint = "save the file as UTF-8 (in Excel: CSV UTF-8)"
    assert {k: bad[k] for k in ("input", "outcome", "exit_code", "message", "hint")} == {
        "input": "fi\\xe9vre", "outcome": "bad_input", "exit_code": 2, "message": message,
        "hint": hint,
    }  # fmt: skip
    assert f"error: fi\\xe9vre: {message}" in result.stderr.splitlines()
    assert sorted(dict(s.params)["string"] for s in fake.seen) == ["wind", "zephyr fever"]
    # a dry run counts it as bad input, and sends nothing
    seen = len(fake.seen)
    plan = run(["search", "--file", str(path), "--umls-release", "2099AA", "--json",
                "--dry-run", "--refresh"], tmp_path)  # fmt: skip
    (doc,) = lines(plan)
    assert (doc["plan"]["inputs"], doc["plan"]["bad_input"], doc["plan"]["to_fetch"]) == (3, 1, 2)
    assert len(fake.seen) == seen


def test_a_code_line_that_is_not_utf8_is_one_bad_input(fake: FakeUts, tmp_path: Path) -> None:
    path = tmp_path / "codes.tsv"
    path.write_bytes(b"SNOMEDCT_US\t99\xff\nSNOMEDCT_US\t9990101009\n")
    result = run(["cuis", "--file", str(path), "--umls-release", "2099AA", "-q"], tmp_path)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: SNOMEDCT_US 99\\xff: {path}, line 1: the line is not UTF-8 text (byte 0xff "
        "at byte 15)\n"
    )
    # MRCONSO.RRF: SNOMEDCT_US 9990101009 is in C9000001 ("Zephyr fever")
    assert "C9000001" in result.stdout and len(fake.seen) == 1


# -- standard input closed ---------------------------------------------------------------------


def test_file_dash_with_standard_input_closed_is_bad_input(tmp_path: Path) -> None:
    """Under cron or ``nohup ... <&-`` there is no standard input at all (``sys.stdin`` is
    None): bad input saying so, never a traceback. A fresh process, its descriptor 0 closed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "TEMPMEDBENCH_"))}
    with socket.socket() as free:  # a loopback port nothing listens on: never the real UTS
        free.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{free.getsockname()[1]}/rest"
    env.update(UMLS_API_KEY=CANARY_KEY, UMLS_BASE_URL=nowhere,
               TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"),
               TEMPMEDBENCH_STATE_DIR=str(tmp_path / "state"))  # fmt: skip
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", sys.executable, "-m", "tempmedbench_synonyms",
         "umls", "search", "--file", "-", "--umls-release", "2099AA", "--json"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    message = "-: standard input is closed: --file - has nothing to read"
    assert (done.returncode, json.loads(done.stdout)["message"]) == (2, message)
    assert done.stderr == (
        f"error: {message}\nhint: give the inputs in a file (--file PATH), or pipe them in\n"
    )
    assert not (tmp_path / "cache").exists() and not (tmp_path / "state").exists()


# -- a SAB argument beside SAB<TAB>CODE lines --------------------------------------------------


def test_a_sab_argument_and_a_line_of_another_sab_are_refused_as_ambiguous(
    fake: FakeUts, tmp_path: Path
) -> None:
    """``crosswalk MSH --file -`` with a line ``LNC<TAB>code``: which source was meant? Bad
    input naming the line, nothing asked. A line of the argument's own SAB, or a code alone,
    is that source's code."""
    refused = run(["crosswalk", "MSH", "--file", "-", "--umls-release", "2099AA"], tmp_path,
                  stdin="D990091\nLNC\t99901-5\n")  # fmt: skip
    assert (refused.exit_code, refused.stdout) == (2, "")
    assert refused.stderr == (
        "error: -, line 2: the line's SAB LNC is not the SAB argument MSH\n"
        "hint: give SAB<TAB>CODE lines and no SAB argument, or the SAB argument and one code "
        "a line\n"
    )
    assert fake.seen == [] and not (tmp_path / "cache").exists()
    # MRCONSO.RRF: MSH D990091 ("Wind Fever") and D990090 ("Meteoric Disorders")
    same = run(["cuis", "MSH", "--file", "-", "--umls-release", "2099AA", "--json", "-q"],
               tmp_path, stdin="D990091\nMSH\tD990090\n")  # fmt: skip
    assert same.exit_code == 0, same.stderr
    assert [d["input"] for d in lines(same)] == ["MSH D990091", "MSH D990090"]
