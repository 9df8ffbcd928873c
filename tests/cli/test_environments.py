"""Odd environments (issue 17, SPEC section 8 "Environments"): no home folder. A clear error
(exit 2) naming the variables that fix it, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import MINI, MINI_MRCONSO
from tempmedbench_synonyms.testing import CANARY_KEY, FakeUtsServer

# -- no HOME and no passwd entry (docker run --user N, some CI sandboxes) ----------------------

#: The console script, in a process whose user has no passwd entry: simulated, since the tests
#: may run as a user who has one (root does; and a uid without one could not run the
#: interpreter when it lives in a home folder). Python and platformdirs ask ``pwd.getpwuid``.
_NO_PASSWD_ENTRY = """
import pwd
def _no_entry(uid):
    raise KeyError(f"getpwuid(): uid not found: {uid}")
pwd.getpwuid = _no_entry
from tempmedbench_synonyms.cli import script_main
script_main()
"""


def _without_home(**more: str) -> dict[str, str]:
    """This environment without HOME, the XDG folders and every variable of the tool."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "HOME"
        and not k.startswith(("XDG_", "TEMPMEDBENCH_", "UMLS_"))
        and "proxy" not in k.lower()
    }
    return {**env, **more}


def _no_passwd(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _NO_PASSWD_ENTRY, *args],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _no_home_message(kind: str) -> str:
    return (
        f"the default {kind} folder is in the home folder, and there is none: HOME is not set, "
        f"and user id {os.getuid()} has no home folder in the password database"
    )


NO_HOME_HINT = (
    "set HOME to a folder you own, or TEMPMEDBENCH_CACHE_DIR and TEMPMEDBENCH_STATE_DIR to "
    "folders you can write in; in a container run as a user with no passwd entry, add "
    "-e HOME=/tmp (or a folder you mount)"
)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="a passwd entry is a POSIX thing")
def test_without_a_home_folder_each_command_says_which_variables_to_set(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    """Issue 17 item 9: every REST command exited 70 (a bug), doctor and --version gave a
    traceback. Now exit 2 naming HOME, TEMPMEDBENCH_CACHE_DIR and TEMPMEDBENCH_STATE_DIR, and
    --version says what is wrong in place of the cache folder."""
    env = _without_home(UMLS_API_KEY=CANARY_KEY, UMLS_BASE_URL=mini_uts.base_url)
    out = tmp_path / "out"
    version = _no_passwd(["--version"], env, tmp_path)
    assert (version.returncode, version.stderr) == (0, "")
    assert version.stdout.splitlines()[-1] == (
        f"cache folder: none: {_no_home_message('cache')}; {NO_HOME_HINT}"
    )
    regenerate = _no_passwd(["regenerate", str(MINI), "--out", str(out), "--json"], env, tmp_path)
    report = json.loads(regenerate.stdout)
    assert (regenerate.returncode, report["outcome"], report["message"], report["hint"]) == (
        2, "bad_input", _no_home_message("cache"), NO_HOME_HINT
    )  # fmt: skip
    assert regenerate.stderr.splitlines()[-2:] == [
        f"error: {_no_home_message('cache')}",
        f"hint: {NO_HOME_HINT}",
    ]
    umls = _no_passwd(["umls", "concept", "C9000001", "--umls-release", "2099AA"], env, tmp_path)
    assert (umls.returncode, umls.stderr.splitlines()[0]) == (
        2,
        f"error: {_no_home_message('cache')}",
    )
    cache = _no_passwd(["cache", "info", "--json"], env, tmp_path)
    assert (cache.returncode, json.loads(cache.stdout)["message"]) == (2, _no_home_message("cache"))
    doctor = _no_passwd(["doctor", str(MINI), "--json"], env, tmp_path)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert doctor.returncode == 2
    assert (checks["cache"]["message"], checks["cache"]["hint"]) == (
        _no_home_message("cache"),
        NO_HOME_HINT,
    )
    # The probe shares the rate state of the machine, which has no folder either.
    for name in ("uts", "rate_state"):
        assert (checks[name]["message"], checks[name]["hint"]) == (
            _no_home_message("state"),
            NO_HOME_HINT,
        )
    assert mini_uts.fake.seen == []  # nothing was sent
    for done in (version, regenerate, umls, cache, doctor):
        assert "Traceback" not in done.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no "~" folder made in the working folder


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="a passwd entry is a POSIX thing")
def test_without_a_home_folder_the_two_variables_are_enough(
    mini_uts: FakeUtsServer, tmp_path: Path
) -> None:
    env = _without_home(
        UMLS_API_KEY=CANARY_KEY,
        UMLS_BASE_URL=mini_uts.base_url,
        TEMPMEDBENCH_CACHE_DIR=str(tmp_path / "cache"),
        TEMPMEDBENCH_STATE_DIR=str(tmp_path / "state"),
    )
    rest = _no_passwd(["regenerate", str(MINI), "--out", str(tmp_path / "a"), "--json"], env,
                      tmp_path)  # fmt: skip
    assert (rest.returncode, json.loads(rest.stdout)["outcome"]) == (0, "verified"), rest.stderr
    # A run from a local MRCONSO.RRF needs neither folder.
    local = _no_passwd(["regenerate", str(MINI), "--mrconso", str(MINI_MRCONSO), "--out",
                        str(tmp_path / "b"), "-q"], _without_home(), tmp_path)  # fmt: skip
    assert (local.returncode, local.stderr) == (0, "")
