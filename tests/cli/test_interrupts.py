"""Ctrl-C and SIGTERM with --json (issue 17 item 12, SPEC section 5): the ``interrupted`` report
still comes on stdout, for every command that has --json, with exit 130 or 143.

A real signal is sent to a real process in the middle of a run (the fake UTS holds its answers
until then, and the test waits for the run's own progress line on stderr before it sends it);
every other command is stopped in-process where its work is (the signal's ``Interrupted``), as
``runtime.interrupts`` raises it.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import GPS_FILE, MINI, MINI_MRCONSO, ROOMY_TIMEOUT, HeldFake, Lines, wait_until
from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli import app
from tempmedbench_synonyms.errors import Interrupted
from tempmedbench_synonyms.testing import (
    CANARY_KEY,
    FakeUtsData,
    FakeUtsServer,
    find_secret,
    make_invented_release,
)

HINT = "run the same command again: it goes on where this one stopped"

# -- a real signal to a real run -----------------------------------------------------------------


def _processes_naming(marker: str) -> list[int]:
    """Every process whose command line holds ``marker`` (Linux ``/proc``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue  # gone meanwhile
    return found


@pytest.fixture
def slow_uts(tmp_path: Path) -> Iterator[tuple[FakeUtsServer, Path]]:
    """A fake UTS that answers 12 requests and holds the rest, and an invented release of 24
    concepts: a run stays in its middle until it is stopped."""
    rel = make_invented_release(tmp_path / "gen", concepts=24, questions=24)
    fake = HeldFake(FakeUtsData.from_mrconso(rel.mrconso), api_key=CANARY_KEY, answers=12)
    with FakeUtsServer(fake) as server:
        try:
            yield server, rel.folder
        finally:
            fake.release.set()


def _start(args: list[str], base_url: str, tmp_path: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(UMLS_API_KEY=CANARY_KEY, UMLS_BASE_URL=base_url,
               TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"))  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-m", "tempmedbench_synonyms", *args],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _progress(line: str) -> bool:
    """The progress line of a fetch: ``UMLS 2099AA: 0/24 concepts, ...``."""
    return line.startswith("UMLS 2099AA: ") and "/24 concepts" in line


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="looks for processes left in /proc")
@pytest.mark.parametrize(
    ("command", "how", "code"),
    [
        ("regenerate", signal.SIGINT, 130),
        ("regenerate", signal.SIGTERM, 143),
        ("freeze", signal.SIGINT, 130),
        ("freeze", signal.SIGTERM, 143),
    ],
    ids=["regenerate-SIGINT", "regenerate-SIGTERM", "freeze-SIGINT", "freeze-SIGTERM"],
)
def test_a_signal_in_the_middle_of_a_fetch_still_prints_the_interrupted_report(
    slow_uts: tuple[FakeUtsServer, Path], tmp_path: Path, command: str, how: int, code: int
) -> None:
    server, release = slow_uts
    out = tmp_path / "out"
    args = [command, str(release), "--json", "--rate", "20"]  # (the most: only to be quick)
    args += ["--out", str(out)] if command == "regenerate" else ["--force"]
    with _start(args, server.base_url, tmp_path) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        stderr = Lines(proc.stderr)
        stderr.wait_for(_progress)  # the fetch has begun: the run is in its middle
        # 12 answered and more held: requests sent, some answered, some still on their way
        wait_until(lambda: len(server.fake.seen) > 12 or proc.poll() is not None, "13 requests")
        assert len(server.fake.seen) < 25  # not done yet (24 concepts and the probe)
        proc.send_signal(how)
        report = json.loads(proc.stdout.read())
        proc.wait(timeout=60)
        lines = stderr.rest()
    name = "Ctrl-C" if how == signal.SIGINT else "SIGTERM"
    assert proc.returncode == code
    assert {k: report[k] for k in ("outcome", "exit_code", "message", "hint", "command")} == {
        "outcome": "interrupted",
        "exit_code": code,
        "message": f"interrupted by {name}: what was fetched stays cached",
        "hint": HINT,
        "command": command,
    }
    assert (report["schema_version"], report["tool_version"]) == (1, __version__)
    # what the run did before it stopped: each request that reached the fake (the report said 0)
    assert (report["requests"], report["cache_hits"]) == (len(server.fake.seen), 0)
    assert lines[-1] == "interrupted: nothing was left half-written; run the same command again"
    assert not any("Traceback" in line for line in lines)
    assert _processes_naming(str(release)) == []  # no process left behind
    assert not out.exists() or not any(out.rglob("*.json*"))  # nothing written but the cache
    assert find_secret(CANARY_KEY, texts={"stdout": json.dumps(report),
                       "stderr": "\n".join(lines)}, folders=[tmp_path]) == []  # fmt: skip


@pytest.fixture
def slower_uts() -> Iterator[FakeUtsServer]:
    """A fake UTS of the mini release that holds every answer: the one request of ``doctor``
    or ``umls`` is still on its way when the signal comes."""
    fake = HeldFake(FakeUtsData.from_mrconso(MINI_MRCONSO), api_key=CANARY_KEY, answers=0)
    with FakeUtsServer(fake) as server:
        try:
            yield server
        finally:
            fake.release.set()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="looks for processes left in /proc")
@pytest.mark.parametrize("command", ["doctor", "umls"])
def test_a_signal_while_the_one_request_is_on_its_way_still_prints_the_report(
    slower_uts: FakeUtsServer, tmp_path: Path, command: str
) -> None:
    """doctor had no interrupted report at all (a traceback for Ctrl-C, none for SIGTERM)."""
    marker = str(tmp_path / "cache")
    args = {
        "doctor": ["doctor", str(MINI), "--json"],
        "umls": ["umls", "concept", "C9000001", "--umls-release", "2099AA", "--json"],
    }[command]
    with _start(args, slower_uts.base_url, tmp_path) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        stderr = Lines(proc.stderr)
        if command == "doctor":  # its own progress: a line per check, the probe after api_key
            stderr.wait_for(lambda line: line.startswith("ok    api_key"))
        # The request has reached the fake, which holds it: the signal comes in the middle.
        wait_until(lambda: slower_uts.fake.seen or proc.poll() is not None, "the one request")
        assert len(slower_uts.fake.seen) == 1 and proc.poll() is None
        proc.send_signal(signal.SIGINT)
        report = json.loads(proc.stdout.read())
        proc.wait(timeout=60)
        lines = stderr.rest()
    assert proc.returncode == 130
    assert (report["outcome"], report["exit_code"], report["hint"]) == ("interrupted", 130, HINT)
    if command == "doctor":
        assert (report["command"], report["ok"]) == ("doctor", False)
        # The checks made before the signal, and none after.
        assert [c["name"] for c in report["checks"]] == ["versions", "release", "api_key"]
    else:
        assert report["found"] is False
    assert lines[-1] == "interrupted: nothing was left half-written; run the same command again"
    assert not any("Traceback" in line for line in lines)
    assert _processes_naming(marker) == []


# -- every other command with --json, stopped in-process where its work is -----------------------


def _stopped(*args: Any, **kwargs: Any) -> Any:
    raise Interrupted(signal.SIGTERM, "SIGTERM")


@pytest.mark.parametrize(
    ("args", "where", "empty"),
    [
        (["check", str(MINI)], "tempmedbench_synonyms.cli.check", {"files": {}, "drifted": []}),
        (["demo", "--out", "{tmp}/demo"], "tempmedbench_synonyms.cli.run", {"files": {}}),
        (["gps", "validate", str(MINI), "--gps", str(GPS_FILE)],
         "tempmedbench_synonyms.cli.gps.validate_gps", {"findings": [], "counts": {}}),
        (["gps", "lookup", "22298006", "--gps", str(GPS_FILE)],
         "tempmedbench_synonyms.cli.gps.load_concept_index", {"concepts": []}),
        (["cache", "info", "--cache-dir", "{tmp}/c"], "tempmedbench_synonyms.uts.cache.cache_info",
         {}),
        (["cache", "clear", "--cache-dir", "{tmp}/c"],
         "tempmedbench_synonyms.uts.cache.clear_cache", {}),
    ],
    ids=["check", "demo", "gps-validate", "gps-lookup", "cache-info", "cache-clear"],
)  # fmt: skip
def test_every_command_with_json_prints_the_interrupted_report(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    where: str,
    empty: dict[str, Any],
) -> None:
    module, name = where.rsplit(".", 1)
    monkeypatch.setattr(f"{module}.{name}", _stopped)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = CliRunner().invoke(app, [*args, "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 143
    assert {k: report[k] for k in ("outcome", "exit_code", "message", "hint", *empty)} == {
        "outcome": "interrupted",
        "exit_code": 143,
        "message": "interrupted by SIGTERM: what was fetched stays cached",
        "hint": HINT,
        **empty,
    }
    assert result.stderr.splitlines()[-1] == (
        "interrupted: nothing was left half-written; run the same command again"
    )


# -- a signal before the command starts, and one after it ended ----------------------------------

#: The console script as pip installs it (its entry point), in a child that sends itself ``SIG``
#: at a chosen moment: ``imports`` as the CLI's modules start to be imported (a Ctrl-C pressed
#: with the Enter that started the command), ``after`` as the command's work has ended and its
#: report is still to be written.
_SCRIPT = """
import contextlib, os, sys
from importlib.metadata import entry_points
from tempmedbench_synonyms import runtime
moment, sig, script = sys.argv[1], int(sys.argv[2]), sys.argv[3]
del sys.argv[1:4]
sys.argv[0] = script

class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == "tempmedbench_synonyms.cli":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), sig)
        return None

if moment == "imports":
    sys.meta_path.insert(0, Hook())
else:
    within = runtime.interrupts

    @contextlib.contextmanager
    def then_signal():
        try:
            with within():
                yield
        finally:
            os.kill(os.getpid(), sig)

    runtime.interrupts = then_signal
(entry,) = entry_points(group="console_scripts", name=script)
entry.load()()
"""


def _script(moment: str, how: int, args: list[str], tmp_path: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "TEMPMEDBENCH_"))}
    env["TEMPMEDBENCH_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, moment, str(int(how)), *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("script", "how", "code"),
    [
        ("tempmedbench-synonyms", signal.SIGINT, 130),
        ("tempmedbench-synonyms", signal.SIGTERM, 143),
        ("tempmedbench-regenerate-synonyms", signal.SIGINT, 130),
    ],
    ids=["main-SIGINT", "main-SIGTERM", "regenerate-SIGINT"],
)
def test_a_signal_while_the_script_starts_is_held_for_the_command(
    tmp_path: Path, script: str, how: int, code: int
) -> None:
    """A Ctrl-C in the first few tenths of a second (the CLI's imports) printed Python's
    traceback from the middle of an import, and a SIGTERM killed the process with no report: the
    command now starts and ends at once as interrupted."""
    out = tmp_path / "out"
    if script == "tempmedbench-synonyms":
        args = [script, "check", str(MINI), "--json"]
    else:
        args = [script, str(MINI), "--mrconso", str(MINI_MRCONSO), "--out", str(out), "--json"]
    returncode, stdout, stderr = _script("imports", how, args, tmp_path)
    report = json.loads(stdout)
    name = "Ctrl-C" if how == signal.SIGINT else "SIGTERM"
    assert (returncode, report["outcome"], report["exit_code"], report["message"]) == (
        code,
        "interrupted",
        code,
        f"interrupted by {name}: what was fetched stays cached",
    )
    assert "Traceback" not in stderr
    assert stderr.splitlines() == [
        "interrupted: nothing was left half-written; run the same command again"
    ]
    assert not out.exists()


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_after_the_command_ended_changes_nothing(tmp_path: Path, how: int) -> None:
    """The work is done and the report is being written: a SIGTERM there killed the process
    with half a report or none, and a Ctrl-C turned the outcome into exit 130 with no report.
    It is ignored: the whole report, and the command's own exit code."""
    args = ["tempmedbench-synonyms", "check", str(MINI), "--json"]
    returncode, stdout, stderr = _script("after", how, args, tmp_path)
    report = json.loads(stdout)
    assert (returncode, report["outcome"], report["exit_code"]) == (1, "mismatch", 1)
    assert "Traceback" not in stderr and "interrupted" not in stderr
    assert stderr.splitlines()[-1].startswith("hint: a rebuilt file is missing")


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="Linux only")
@pytest.mark.parametrize(
    ("args", "how", "code"),
    [(["--help"], signal.SIGINT, 130), (["umls", "--help"], signal.SIGTERM, 143),
     (["umls"], signal.SIGTERM, 143)],
)  # fmt: skip
def test_a_signal_while_the_help_waits_for_its_reader_ends_it(
    tmp_path: Path, args: list[str], how: int, code: int
) -> None:
    """The help to a pipe nobody reads blocks once the pipe is full: a Ctrl-C or SIGTERM there
    was held for a command that never starts, until the reader read or left (then exit 0). It
    ends the help as it ends a command (130, 143), the reader still there."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # a page: less than the help
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UMLS_", "TEMPMEDBENCH_"))}
    env.update(TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="200")
    reader = os.fdopen(read_end, "rb")
    process = subprocess.Popen(
        [sys.executable, "-m", "tempmedbench_synonyms", *args],
        stdout=write_end, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        os.close(write_end)
        wait_until(lambda: _writing_to_a_pipe(process.pid), "the help to fill the pipe")
        process.send_signal(how)
        try:  # a deadline only a hang reaches
            returncode = process.wait(timeout=ROOMY_TIMEOUT)
        except subprocess.TimeoutExpired:
            reader.close()  # the reader leaves: the held signal's exit 0
            returncode = process.wait(timeout=ROOMY_TIMEOUT)
        assert (returncode, process.communicate()[1]) == (code, b"")
    finally:
        reader.close()
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stderr is not None:
            process.stderr.close()


def _writing_to_a_pipe(pid: int) -> bool:
    """Whether the process ``pid`` waits in a write to a pipe (Linux: its wait channel)."""
    return "pipe_write" in Path(f"/proc/{pid}/wchan").read_text(encoding="utf-8")
