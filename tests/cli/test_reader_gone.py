"""A stdout whose reader has gone (a broken pipe: ``| head`` read what it wanted) is not an
error: what is left to print is dropped, a command that answers inputs one by one asks no more,
and the exit code is the outcome's, with nothing said of the pipe (it was click's exit 1,
"mismatch" or "not found", and for some commands "error: Broken pipe")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

SCRIPT = "from tempmedbench_synonyms.cli import script_main; script_main()"


def closed_stdout(args: list[str], tmp_path: Path) -> tuple[int, str]:
    """Run the console script with stdout a pipe whose reader closed before it started: its exit
    code and stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if k != "UMLS_API_KEY"}
    env.update(TEMPMEDBENCH_STATE_DIR=str(tmp_path / "state"),
               TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")  # fmt: skip
    try:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, *args], stdout=write_end, stderr=subprocess.PIPE,
            cwd=tmp_path, env=env, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    err = done.stderr.decode("utf-8")
    for said in ("Traceback", "Exception ignored", "Broken pipe", "error:"):
        assert said not in err, err
    return done.returncode, err


def test_a_verified_demo_whose_json_report_has_no_reader_exits_0(tmp_path: Path) -> None:
    code, err = closed_stdout(["demo", "--json"], tmp_path)
    assert code == 0
    assert err.splitlines()[-1] == "verified (exit 0): both files match expected_sha256.json"
    assert (tmp_path / "tempmedbench-demo-out" / "synonyms").is_dir()  # the work was done


def test_json_lines_without_a_reader_stop_asking_after_the_first(tmp_path: Path) -> None:
    """The first answer is found (exit 0); the two after it, not found, are never asked: their
    "no code sharing" lines never come. (A first answer not found would be exit 1.)"""
    meta = tmp_path / "2099AA" / "META"
    shutil.copytree(ROOT / "fixtures" / "umls", meta, ignore=shutil.ignore_patterns("*.md"))
    inputs = tmp_path / "in.txt"
    inputs.write_text("SNOMEDCT_US\t9990191001\nSNOMEDCT_US\t1\nSNOMEDCT_US\t2\n", "utf-8")
    args = ["umls", "crosswalk", "--file", str(inputs), "--meta", str(meta), "--json"]
    code, err = closed_stdout(args, tmp_path)
    assert code == 0
    assert "no code sharing" not in err
    inputs.write_text("SNOMEDCT_US\t1\nSNOMEDCT_US\t9990191001\nSNOMEDCT_US\t2\n", "utf-8")
    code, err = closed_stdout(args, tmp_path)
    assert code == 1
    assert [line for line in err.splitlines() if "no code sharing" in line] == [
        "SNOMEDCT_US 1: UMLS 2099AA has no code sharing a concept with SNOMEDCT_US code 1"
    ]


@pytest.mark.parametrize("args", [["--version"], ["cache", "info"], ["cache", "info", "--json"]])
def test_human_output_without_a_reader_keeps_exit_0(args: list[str], tmp_path: Path) -> None:
    """(``--help`` is printed by rich, which ends a broken pipe with its own exit 1.)"""
    assert closed_stdout(args, tmp_path) == (0, "")
