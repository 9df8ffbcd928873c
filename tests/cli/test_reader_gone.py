"""A stdout whose reader has gone (a broken pipe: ``| head`` read what it wanted) is not an
error: what is left to print is dropped, a command that answers inputs one by one asks no more,
and the exit code is the outcome's, with nothing said of the pipe (it was click's exit 1,
"mismatch" or "not found", and for some commands "error: Broken pipe")."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import FIXTURES, GPS_FILE, MINI, MINI_MRCONSO, ROOT
from tempmedbench_synonyms.cli import app

SCRIPT = "from tempmedbench_synonyms.cli import script_main; script_main()"
#: the second console script, tempmedbench-regenerate-synonyms
REGENERATE = "from tempmedbench_synonyms.cli import script_regenerate_main as m; m()"


def closed(
    args: list[str], tmp_path: Path, *, closing: str, script: str = SCRIPT, **env_vars: str
) -> subprocess.CompletedProcess[bytes]:
    """Run the console script with ``closing`` (``stdout``, ``stderr`` or ``both``, as with
    ``2>&1 | head``) a pipe whose reader closed before it started; the other one is read.
    ``script``: ``REGENERATE`` for the second console script; ``env_vars`` added."""
    out = "gone" if closing in ("stdout", "both") else "read"
    err = "gone" if closing in ("stderr", "both") else "read"
    return started(args, tmp_path, stdout=out, stderr=err, script=script, **env_vars)


def started(
    args: list[str], tmp_path: Path, *, stdout: str = "read", stderr: str = "read",
    script: str = SCRIPT, **env_vars: str,
) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
    """Run the console script with each of ``stdout`` and ``stderr``: ``read`` (a pipe read
    whole), ``gone`` (a pipe whose reader closed before it started), ``full`` (``>/dev/full``:
    a disk with no space left) or ``closed`` (``2>&-``: no descriptor at all)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if k != "UMLS_API_KEY"}
    env.update(TEMPMEDBENCH_STATE_DIR=str(tmp_path / "state"),
               TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")  # fmt: skip
    env.update(env_vars)
    full = os.open("/dev/full", os.O_WRONLY) if "full" in (stdout, stderr) else None
    ends = {"read": subprocess.PIPE, "gone": write_end, "full": full, "closed": subprocess.DEVNULL}
    shut = [fd for fd, how in ((1, stdout), (2, stderr)) if how == "closed"]
    try:
        return subprocess.run(
            [sys.executable, "-c", script, *args], stdout=ends[stdout], stderr=ends[stderr],
            cwd=tmp_path, env=env, timeout=120, check=False,
            preexec_fn=(lambda: [os.close(fd) for fd in shut]) if shut else None,
        )  # fmt: skip
    finally:
        os.close(write_end)
        if full is not None:
            os.close(full)


def closed_stdout(
    args: list[str], tmp_path: Path, *, script: str = SCRIPT, **env_vars: str
) -> tuple[int, str]:
    """The exit code and stderr of the console script with stdout's reader gone."""
    done = closed(args, tmp_path, closing="stdout", script=script, **env_vars)
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
    assert closed_stdout(args, tmp_path) == (0, "")


@pytest.mark.parametrize(
    "args",
    [["--help"], ["umls", "--help"], ["umls", "crosswalk", "--help"], ["gps", "validate", "-h"],
     ["regenerate", "--help"], ["regenerate-synonyms", "--help"],
     ["regenerate-synonyms", "--version"]],
)  # fmt: skip
def test_help_without_a_reader_exits_0(args: list[str], tmp_path: Path) -> None:
    """rich prints the help, and ended a broken pipe with its own exit 1
    (``regenerate-synonyms``: the second console script)."""
    script = SCRIPT
    if args[0] == "regenerate-synonyms":
        script, args = REGENERATE, args[1:]
    assert closed_stdout(args, tmp_path, script=script) == (0, "")


class _LeavesBeforeTheLastNewline(io.StringIO):
    """A stdout whose reader leaves once the help is printed, before click's last newline."""

    def write(self, text: str) -> int:
        if text == "\n" and self.getvalue().endswith("\n"):
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


def test_help_whose_reader_leaves_before_its_last_newline_exits_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """click writes the newline after rich's help itself: the broken pipe there was click's own
    exit 1. The help came whole but for that newline."""
    whole = CliRunner().invoke(app, ["umls", "--help"], prog_name="tempmedbench-synonyms")
    assert (whole.exit_code, whole.stdout.endswith("\n\n")) == (0, True)
    stdout = _LeavesBeforeTheLastNewline()
    monkeypatch.setattr(sys, "stdout", stdout)
    with pytest.raises(SystemExit) as done:
        app(["umls", "--help"], prog_name="tempmedbench-synonyms")
    assert done.value.code == 0
    assert stdout.getvalue() + "\n" == whole.stdout


def test_a_group_called_bare_without_a_reader_keeps_its_exit_2(tmp_path: Path) -> None:
    """``umls`` alone prints its help and exits 2 (a usage error); stdout's reader gone, still 2
    (it was rich's 1)."""
    assert closed_stdout(["umls"], tmp_path) == (2, "")


@pytest.mark.parametrize(("closing", "rich"), [("stderr", "1"), ("both", "1"), ("stderr", "0")])
def test_a_usage_error_whose_stderr_has_no_reader_exits_2(
    closing: str, rich: str, tmp_path: Path
) -> None:
    """``... --bogus 2>&1 >/dev/null | head -c 0``: the usage error's 2 (it was rich's 1; with
    TYPER_USE_RICH=0, click's own broken pipe out of typer's hands: 1)."""
    done = closed(["umls", "crosswalk", "--bogus"], tmp_path, closing=closing, TYPER_USE_RICH=rich)
    assert done.returncode == 2
    assert done.stdout in (None, b"")


def test_a_usage_errors_json_still_comes_when_stderr_has_no_reader(tmp_path: Path) -> None:
    done = closed(["umls", "crosswalk", "--bogus", "--json"], tmp_path, closing="stderr")
    assert done.returncode == 2
    assert json.loads(done.stdout)["message"] == "No such option: --bogus"


def test_a_demo_whose_stderr_has_no_reader_still_verifies_and_reports_on_stdout(
    tmp_path: Path,
) -> None:
    """The progress lines and the report go to a stderr whose reader has gone: they are dropped,
    the scan goes on (it was "MRCONSO.RRF: cannot read: Broken pipe", exit 1), and the --json
    report still comes whole on stdout."""
    done = closed(["demo", "--json"], tmp_path, closing="stderr")
    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert (report["outcome"], report["exit_code"]) == ("verified", 0)


@pytest.mark.parametrize(
    "args",
    [["demo"], ["umls", "crosswalk", "SNOMEDCT_US", "9990191001", "--mrconso",
                str(ROOT / "fixtures" / "umls" / "MRCONSO.RRF"), "--umls-release", "2099AA"]],
)  # fmt: skip
def test_both_streams_to_a_reader_gone_keep_the_outcomes_exit(
    args: list[str], tmp_path: Path
) -> None:
    """``2>&1 | head`` whose ``head`` has gone: 0 (it was 1, read as "mismatch")."""
    assert closed(args, tmp_path, closing="both").returncode == 0


def test_doctor_whose_stderr_has_no_reader_keeps_its_exit(tmp_path: Path) -> None:
    """doctor's lines go to stderr; with its reader gone they are dropped and the exit is the
    checks' (3: no API key here), as with stderr read (it was 2, from its "ok"/"FAIL" word)."""
    assert closed(["doctor"], tmp_path, closing="stdout").returncode == 3
    assert closed(["doctor"], tmp_path, closing="stderr").returncode == 3


# -- a full disk, a closed stream ----------------------------------------------------------------

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
#: how the house says a full disk: what ``umls concept ... >/dev/full`` said already
FULL_DISK = (
    "error: No space left on device\n"
    "hint: the disk is full: free some space, or choose a folder on another disk\n"
)
META = str(FIXTURES / "umls")
#: ``--show-completion bash`` takes the shell named (typer's switch for it), not the one typer
#: finds running the tests (``sh`` under make on some machines: "Shell sh not supported", exit 1)
NAMED_SHELL = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}


@needs_dev_full
@pytest.mark.parametrize(
    ("args", "rich"),
    [(["--help"], "1"), (["--help"], "0"), (["umls", "crosswalk", "-h"], "1"), (["--version"], "1"),
     (["--show-completion", "bash"], "1"), (["cache", "info"], "1"),
     (["cache", "info", "--json"], "1"), (["umls"], "1"), (["umls", "concept", "-h"], "0")],
)  # fmt: skip
def test_a_full_disk_on_stdout_is_said_and_exits_2(
    args: list[str], rich: str, tmp_path: Path
) -> None:
    """``>/dev/full``: said as ``umls concept`` says it, exit 2 (bad input: the output could not
    be written), for the help and the version too. It was a traceback and exit 1."""
    done = started(args, tmp_path, stdout="full", TYPER_USE_RICH=rich, **NAMED_SHELL)
    assert (done.returncode, done.stderr.decode("utf-8")) == (2, FULL_DISK)


@needs_dev_full
@pytest.mark.parametrize("json_out", [[], ["--json"]])
def test_a_full_disk_under_a_commands_output_is_said_once(
    json_out: list[str], tmp_path: Path
) -> None:
    """The failure's --json object is not written to the full disk again (it was a traceback
    from that second write, exit 1)."""
    done = started(["umls", "concept", "C9000001", "--meta", META, *json_out], tmp_path,
                   stdout="full")  # fmt: skip
    err = done.stderr.decode("utf-8")
    assert (done.returncode, err.endswith(FULL_DISK), "Traceback" in err) == (2, True, False)


def test_a_completion_script_without_a_reader_exits_0(tmp_path: Path) -> None:
    """It was click's exit 1."""
    assert closed_stdout(["--show-completion", "bash"], tmp_path, **NAMED_SHELL) == (0, "")


@needs_dev_full
@pytest.mark.parametrize("rich", ["1", "0"])
def test_a_usage_error_whose_stderr_is_a_full_disk_exits_2(rich: str, tmp_path: Path) -> None:
    done = started(["umls", "crosswalk", "--bogus"], tmp_path, stderr="full", TYPER_USE_RICH=rich)
    assert (done.returncode, done.stdout) == (2, b"")


#: the main commands, each as it is run: its stdout and exit code do not depend on stderr
COMMANDS = [
    ["--version"], ["--help"], ["umls", "--help"], ["--bogus"], ["umls"],
    ["demo", "--json"],
    ["regenerate", str(MINI), "--mrconso", str(MINI_MRCONSO), "--out", "out", "--json"],
    ["check", str(MINI), "--json"],
    ["umls", "concept", "C9000001", "--meta", META],
    ["umls", "concept", "C9000001", "--meta", META, "--json"],
    ["umls", "crosswalk", "SNOMEDCT_US", "9990191001", "1", "--meta", META, "--json"],
    ["umls", "atoms", "C9000001", "--mrconso", str(MINI_MRCONSO), "--umls-release", "2099AA"],
    ["gps", "validate", str(FIXTURES / "gps-planted"), "--gps", str(GPS_FILE), "--json"],
    ["cache", "info", "--json"], ["cache", "clear"], ["doctor"],
]  # fmt: skip


def _run_in(folder: Path, args: list[str], stderr: str) -> tuple[int, str]:
    """The exit code and stdout of a run in a folder of its own (its output, cache and state),
    the folder's name taken out of its stdout."""
    folder.mkdir()
    done = started(args, folder, stderr=stderr)
    return done.returncode, done.stdout.decode("utf-8").replace(str(folder), "FOLDER")


@pytest.mark.parametrize("stderr", ["closed", "full"])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(args[:2]))
def test_stderr_closed_or_full_changes_neither_stdout_nor_the_exit(
    args: list[str], stderr: str, tmp_path: Path
) -> None:
    """``2>&-`` (Python's sys.stderr is None: a local ``umls`` question was exit 70 from a
    TypeError, a regeneration's report exit 1 with no --json report) and ``2>/dev/full`` (exit 1,
    a traceback none could read): each command works, prints its stdout and exits with its
    outcome's code, as when stderr is read."""
    if stderr == "full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    assert _run_in(tmp_path / stderr, args, stderr) == _run_in(tmp_path / "read", args, "read")


def test_a_batch_whose_stdout_was_closed_at_start_answers_every_input(tmp_path: Path) -> None:
    """``>&-`` is the null device, as ``>/dev/null``: every input is asked and the exit says one
    was not found (1), as when stdout is read (it was 0: the batch stopped after the first)."""
    args = ["umls", "concept", "--meta", str(ROOT / "fixtures" / "umls"),
            "--index-dir", str(tmp_path / "index"), "C9000001", "C0000000"]  # fmt: skip
    read = started(args, tmp_path, stdout="read")
    shut = started(args, tmp_path, stdout="closed")
    assert (read.returncode, shut.returncode) == (1, 1)
    assert b"Traceback" not in shut.stderr
    assert (
        shut.stderr.decode("utf-8").splitlines()[-1] == read.stderr.decode("utf-8").splitlines()[-1]
    )


def test_a_program_whose_stdout_fails_keeps_its_descriptor(tmp_path: Path) -> None:
    """A program that uses the package, its progress on its own stdout (a full disk): the
    OSError is its own to handle, and its descriptor is left as it was (it was pointed at the
    null device, its later output lost); only a console script's streams are the tool's."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    program = (
        "import os, sys\n"
        "from tempmedbench_synonyms import Umls\n"
        "try:\n"
        f"    with Umls(meta={str(ROOT / 'fixtures' / 'umls')!r}, progress=sys.stdout,\n"
        f"              index_dir={str(tmp_path / 'index')!r}) as umls:\n"
        "        umls.concept('C9000001')\n"
        "except OSError as err:\n"
        "    print('raised', err.errno, file=sys.stderr)\n"
        "same = os.fstat(1).st_rdev == os.stat('/dev/full').st_rdev\n"
        "print('stdout still /dev/full:', same, file=sys.stderr)\n"
    )
    with open("/dev/full", "wb") as full:
        env = {k: v for k, v in os.environ.items() if k != "UMLS_API_KEY"}
        env.update(
            TEMPMEDBENCH_STATE_DIR=str(tmp_path / "state"),
            TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"),
        )  # (nothing of the user's)
        done = subprocess.run([sys.executable, "-c", program], stdout=full, stderr=subprocess.PIPE,
                              cwd=tmp_path, env=env, timeout=120, check=False)  # fmt: skip
    assert done.stderr.decode("utf-8").splitlines() == [
        f"raised {errno.ENOSPC}",
        "stdout still /dev/full: True",
    ]
    assert done.returncode == 0
