"""What the CLI prints, whatever the text and the terminal: ``--json`` stays valid JSON with its
keys (redacted as data, never as text), stdout and stderr of any encoding, paths shown exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import outputs
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.secret import MIN_SECRET_LENGTH, redact, redact_value
from tempmedbench_synonyms.testing import CANARY_KEY

runner = CliRunner()


def test_a_short_key_masks_no_letters_in_json_keys(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``UMLS_API_KEY=e``: the report keeps ``cache_hits`` (a key of one letter is shorter than
    MIN_SECRET_LENGTH: masked only as an ``apiKey=`` value); the run fails offline (exit 4)."""
    monkeypatch.setenv("UMLS_API_KEY", "e")
    monkeypatch.delenv("UMLS_API_KEY_FILE", raising=False)
    result = runner.invoke(
        app,
        ["regenerate", str(mini), "--offline", "--cache-dir", str(tmp_path / "cache"),
         "--out", str(tmp_path / "out"), "--json"],
    )  # fmt: skip
    doc = json.loads(result.stdout)
    assert (result.exit_code, doc["exit_code"], doc["cache_hits"]) == (4, 4, 0)
    assert "cach***" not in result.stdout and "***" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_an_apikey_parameter_in_a_path_is_redacted_as_data(mini: Path, mrconso: Path) -> None:
    """A release path holding ``apikey=x"y``: its value is masked inside the string, and the
    report is valid JSON (the text-level mask used to eat the ``\\`` of ``\\"``)."""
    odd = mini.with_name('apikey=x"y')
    mini.rename(odd)
    result = runner.invoke(app, ["regenerate", str(odd), "--mrconso", str(mrconso), "--json"])
    doc = json.loads(result.stdout)
    assert (result.exit_code, doc["release"]) == (0, str(odd.with_name('apikey=***"y')))


def test_redact_value_masks_strings_and_keys_not_the_text() -> None:
    from tempmedbench_synonyms.secret import ApiKey

    ApiKey(CANARY_KEY)  # read: registered with redact
    report = {f"k{CANARY_KEY}": [f"a {CANARY_KEY} b", 3, None, {"apiKey=z": 'apiKey=v"w'}]}
    assert redact_value(report) == {"k***": ["a *** b", 3, None, {"apiKey=***": 'apiKey=***"w'}]}
    assert MIN_SECRET_LENGTH == 8
    ApiKey("short7!")  # 7 characters: never masked as a bare substring
    assert redact("short7! ?apiKey=short7!") == "short7! ?apiKey=***"


def _cli(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "PYTHON"))}
    base.update(env, NO_COLOR="1", TEMPMEDBENCH_STATE_DIR=str(tmp_path / "state"))
    return subprocess.run(
        [sys.executable, "-m", "tempmedbench_synonyms", *args],
        env=base, capture_output=True, timeout=120, check=False,
    )  # fmt: skip


def test_json_is_utf8_bytes_on_an_ascii_stdout(mini: Path, mrconso: Path, tmp_path: Path) -> None:
    """``PYTHONIOENCODING=ascii``: the report is written as UTF-8 bytes, not a traceback."""
    rel = mini.with_name("relé")
    mini.rename(rel)
    out = tmp_path / "out"
    proc = _cli(["regenerate", str(rel), "--mrconso", str(mrconso), "--out", str(out), "--json"],
                tmp_path, PYTHONIOENCODING="ascii")  # fmt: skip
    doc = json.loads(proc.stdout.decode("utf-8"))
    assert (proc.returncode, doc["release"], doc["outcome"]) == (0, str(rel), "verified")
    assert b"Traceback" not in proc.stderr
    assert len(outputs(out)) == 2


def test_a_failure_on_an_ascii_terminal_is_exit_2_with_its_json(tmp_path: Path) -> None:
    missing = tmp_path / "relé"
    proc = _cli(["regenerate", str(missing), "--mrconso", str(tmp_path / "M"), "--json"],
                tmp_path, PYTHONIOENCODING="ascii")  # fmt: skip
    doc = json.loads(proc.stdout.decode("utf-8"))
    assert (proc.returncode, doc["exit_code"]) == (2, 2)
    assert doc["message"] == f"{missing}: no such folder"
    assert b"Traceback" not in proc.stderr
    assert not missing.exists()


def test_stderr_logging_never_crashes_on_its_encoding(tmp_path: Path) -> None:
    """A log line with a character the stderr encoding lacks is written as its escape."""
    code = (
        "import logging\n"
        "from tempmedbench_synonyms.cli._shared import configure_logging\n"
        "configure_logging(False, 0)\n"
        "logging.getLogger('tempmedbench_synonyms').warning('rel\\u00e9')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONIOENCODING"] = "ascii"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, b"WARNING: rel\\xe9\n")


def test_a_path_with_control_characters_is_shown_escaped(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    """``--out x\\x1b[31m-out``: stderr names ``x\\x1b[31m-out`` (the path one can type), and no
    escape reaches the terminal; the files are written where asked."""
    out = tmp_path / "x\x1b[31m\r-out"
    result = runner.invoke(app, ["regenerate", str(mini), "--mrconso", str(mrconso),
                                 "--out", str(out)])  # fmt: skip
    shown = str(tmp_path / "x\\x1b[31m\\r-out")
    assert result.exit_code == 0
    assert f"written  {shown}/synonyms/synonym_table_kept_full.json" in result.stderr
    assert ("\x1b" in result.stderr, "\r" in result.stderr) == (False, False)
    assert len(outputs(out)) == 2


def test_a_huge_manifest_is_exit_2_and_nothing_is_written(mini: Path, mrconso: Path) -> None:
    """A sparse MANIFEST.sha256 of 16 MiB + 1 byte is refused unread (finding 8)."""
    manifest = mini / "MANIFEST.sha256"
    with manifest.open("r+b") as f:
        f.truncate((16 << 20) + 1)
    result = runner.invoke(app, ["regenerate", str(mini), "--mrconso", str(mrconso), "--json"])
    doc = json.loads(result.stdout)
    message = (
        f"{manifest}: 16777217 bytes (16 MiB), over the limit of 16777216 bytes (16 MiB) for the "
        "release manifest"
    )
    assert (result.exit_code, doc["exit_code"], doc["message"]) == (2, 2, message)
    assert f"error: {message}" in result.stderr
    assert outputs(mini) == []


def test_a_second_freeze_force_is_exit_2_and_keeps_the_backup(mini: Path, mrconso: Path) -> None:
    expected = mini / "synonym_regeneration" / "expected_sha256.json"
    original = expected.read_bytes()
    args = ["freeze", str(mini), "--mrconso", str(mrconso), "--force", "--json"]
    assert runner.invoke(app, args).exit_code == 0
    backup = expected.with_name("expected_sha256.json.bak")
    frozen = expected.read_bytes()
    result = runner.invoke(app, args)
    doc = json.loads(result.stdout)
    message = (
        f"{backup}: exists already: it keeps the hashes an earlier `freeze --force` replaced, "
        "and this freeze would overwrite them"
    )
    assert (result.exit_code, doc["exit_code"], doc["message"]) == (2, 2, message)
    assert f"error: {message}" in result.stderr
    assert (backup.read_bytes(), expected.read_bytes()) == (original, frozen)


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        ("synonyms/synonym_table_kept_full.json", "a folder"),
        ("question_surface/question_surface_synonym.jsonl.unverified", "a FIFO"),
    ],
)
def test_an_output_path_that_is_not_a_file_is_refused_before_any_scan(
    mini: Path, tmp_path: Path, rel: str, kind: str
) -> None:
    """Checked in ``_prepare``, before the scan: the MRCONSO given is empty, which the scan would
    refuse with another message; and no output file is written (it used to write one of two)."""
    out = tmp_path / "out"
    blocker = out / rel
    blocker.parent.mkdir(parents=True)
    if kind == "a folder":
        blocker.mkdir()
    else:
        os.mkfifo(blocker)
    empty = tmp_path / "MRCONSO.RRF"
    empty.write_bytes(b"")
    result = runner.invoke(
        app, ["regenerate", str(mini), "--mrconso", str(empty), "--out", str(out), "--json"]
    )
    doc = json.loads(result.stdout)
    message = f"{blocker}: is {kind}, not a regular file: this run writes a file there"
    assert (result.exit_code, doc["exit_code"], doc["message"]) == (2, 2, message)
    assert f"error: {message}" in result.stderr
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == sorted(
        {rel, rel.split("/")[0]}
    )


def test_a_report_to_a_text_only_stdout_is_the_same_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """``print_json`` writes UTF-8 bytes to ``sys.stdout.buffer``; a stream without one (an
    ``io.StringIO``) gets the same text."""
    import io

    from tempmedbench_synonyms.cli._shared import print_json

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    print_json({"release": "relé\x9b", "n": 1})
    assert json.loads(out.getvalue())["release"] == "relé\x9b"
    assert "\\u009b" in out.getvalue() and out.getvalue().endswith("}\n")


@pytest.mark.parametrize(
    ("text", "shown"),
    [("del\x7f", "del\\u007f"), ("c1\x85", "c1\\u0085"), ("ls\u2028", "ls\\u2028"),
     ("ps\u2029", "ps\\u2029"), ("é\x7f", "é\\u007f"), ("\udcff\x9b", "\\udcff\\u009b"),
     ("’\u2029", "’\\u2029"), ("°\x9f", "°\\u009f"), ("’ ° é", "’ ° é")],
)  # fmt: skip
def test_a_report_escapes_del_c1_and_line_separators(
    monkeypatch: pytest.MonkeyPatch, text: str, shown: str
) -> None:
    """DEL, the C1 controls and U+2028/U+2029 are written as escapes, in an ASCII text too."""
    printed = _printed(monkeypatch, {"s": text})
    assert printed.startswith('{"s":"' + shown + '"'), printed


@pytest.mark.parametrize(
    "key",
    ["canary-0123456789-key", 'canary"quote"key-0123', "canary\\back\\slash-key-01"],
    ids=["plain", "quote", "backslash"],
)
def test_a_report_masks_every_key_in_its_data_also_one_json_escapes(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    """``print_json`` looks for keys in the report's text and walks the data only when one may be
    there; a key holding a character JSON escapes (not in the text as it is) is masked too."""
    import io

    from tempmedbench_synonyms.cli._shared import print_json
    from tempmedbench_synonyms.secret import ApiKey

    ApiKey(key)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    print_json({"results": [{"name": f"x{key}y", key: 1}], "url": "/a?apiKey=zz"}, one_line=True)
    found = json.loads(out.getvalue())
    assert found["results"] == [{"name": "x***y", "***": 1}]
    assert found["url"] == "/a?apiKey=***"
    out.seek(0), out.truncate()
    print_json({"results": [{"name": "nothing to mask"}]}, one_line=True)
    assert json.loads(out.getvalue())["results"] == [{"name": "nothing to mask"}]


@pytest.mark.parametrize(
    ("text", "shown"),
    [("/a?apiKey=zz&b=1", "/a?apiKey=***&b=1"), ("APIKEY=zz", "APIKEY=***"),
     ("x apikey=y=z", "x apikey=***"), ("key=1 y=2 Y=3 ApIkEy=4", "key=1 y=2 Y=3 ApIkEy=***"),
     ("apikey =1 api-key=2", "apikey =1 api-key=2")],
)  # fmt: skip
def test_a_report_masks_every_apikey_parameter_in_any_case(
    monkeypatch: pytest.MonkeyPatch, text: str, shown: str
) -> None:
    """An ``apiKey=`` value is masked whether or not a key was read (a URL pasted as an input)."""
    assert json.loads(_printed(monkeypatch, {"s": text, "t": [text]}))["t"] == [shown]


def _printed(monkeypatch: pytest.MonkeyPatch, report: dict[str, Any]) -> str:
    """What ``print_json`` writes of ``report`` on one line."""
    import io

    from tempmedbench_synonyms.cli._shared import print_json

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    print_json(report, one_line=True)
    return out.getvalue()
