"""The pytest plugin (entry point pytest11): ``fake_uts``, its marker and its factory, run by
pytester in a suite of their own, as a user's suite would use them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tempmedbench_synonyms.testing import CANARY_KEY, mrconso_row

#: What a pytest session that never asks for ``fake_uts`` must not pay for (SPEC section 9: the
#: plugin comes with the package, into every suite of everyone who installs it).
HEAVY = ("rich", "multiprocessing", "http.server", "requests", "ssl", "pydantic")


def test_importing_the_plugin_imports_nothing_heavy() -> None:
    """The entry point's module alone: the package's top level and the plugin, nothing more."""
    code = (
        "import json, sys\n"
        "import pytest\n"
        "before = set(sys.modules)\n"
        "import tempmedbench_synonyms.pytest_plugin\n"
        f"heavy = [m for m in sys.modules if m in {HEAVY!r} or m.split('.')[0] in {HEAVY!r}]\n"
        "print(json.dumps([sorted(set(sys.modules) - before), sorted(heavy)]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, "")
    added, heavy = json.loads(proc.stdout)
    assert added == ["tempmedbench_synonyms", "tempmedbench_synonyms.pytest_plugin"]
    assert heavy == []


def test_a_session_that_never_asks_for_the_fixture_imports_only_the_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole pytest session, the plugin loaded by its entry point or turned off: the modules
    a test sees differ by the plugin's two only; a later test that asks for ``fake_uts`` gets
    the fake (and http.server) imported then."""
    pytester.makepyfile(
        """
        import json, os, sys

        def test_modules():
            with open(os.environ["MODULES_OUT"], "w") as out:
                json.dump(sorted(sys.modules), out)

        def test_then_the_fixture(request):
            if request.config.pluginmanager.has_plugin("tempmedbench_synonyms"):
                request.getfixturevalue("fake_uts")
            with open(os.environ["MODULES_OUT"] + ".after", "w") as out:
                json.dump(sorted(sys.modules), out)
        """
    )
    seen, after = {}, {}
    for name, flags in (("with", ()), ("without", ("-p", "no:tempmedbench_synonyms"))):
        out = pytester.path / f"{name}.json"
        monkeypatch.setenv("MODULES_OUT", str(out))
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *flags)
        result.assert_outcomes(passed=2)
        seen[name] = set(json.loads(out.read_text(encoding="utf-8")))
        after[name] = set(json.loads((pytester.path / f"{name}.json.after").read_text("utf-8")))
    assert sorted(seen["with"] - seen["without"]) == [
        "tempmedbench_synonyms", "tempmedbench_synonyms.pytest_plugin",
    ]  # fmt: skip
    assert seen["without"] - seen["with"] == set()
    assert [m for m in seen["with"] if m.split(".")[0] in HEAVY or m in HEAVY] == []
    assert {"http.server", "tempmedbench_synonyms.testing.fake"} <= after["with"] - seen["with"]
    assert "http.server" not in after["without"]


def test_the_plugin_is_registered_by_its_entry_point(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_x(request):
            assert request.config.pluginmanager.has_plugin("tempmedbench_synonyms")
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_fake_uts_regenerates_the_demo_release_with_no_set_up(pytester: pytest.Pytester) -> None:
    # The user's whole test: the fixture's env and the CLI in a subprocess, nothing else.
    pytester.makepyfile(
        f"""
        import subprocess, sys
        from tempmedbench_synonyms.demo import demo_data

        def test_regenerate(fake_uts, tmp_path):
            assert fake_uts.api_key == {CANARY_KEY!r}
            assert fake_uts.base_url.startswith("http://127.0.0.1:")
            done = subprocess.run(
                [sys.executable, "-m", "tempmedbench_synonyms", "regenerate",
                 str(demo_data().release), "--out", str(tmp_path / "out"), "--json", "-q"],
                env=fake_uts.env, capture_output=True, text=True, timeout=120,
            )
            assert done.returncode == 0, done.stderr
            assert '"outcome": "verified"' in done.stdout
            # the release probe, then one request for each of the demo table's 10 concepts
            # (6 source, 2 cui, 2 aui routes; every answer a single page)
            assert fake_uts.fake.count() == 11
            assert fake_uts.fake.count(200) == 11
            # the answers and the rate state went to this test's own folders
            assert any(fake_uts.cache_dir.rglob("*.json"))
            assert [p.parent.name for p in fake_uts.state_dir.rglob("*.state")] == ["rate"]
            assert fake_uts.env["TEMPMEDBENCH_STATE_DIR"] == str(fake_uts.state_dir)
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_marker_serves_given_rows_for_a_given_release(pytester: pytest.Pytester) -> None:
    row = "C7000001|ENG|P|L1|PF|S1|Y|A70000001||||SNOMEDCT_US|PT|555|invented marker row|0|N||"
    pytester.makepyfile(
        f"""
        import json, urllib.request
        import pytest

        @pytest.mark.fake_uts(rows=[{row!r}], release="2098AB")
        def test_rows(fake_uts):
            url = f"{{fake_uts.base_url}}/content/2098AB/AUI/A70000001?apiKey={{fake_uts.api_key}}"
            with urllib.request.urlopen(url, timeout=10) as answer:
                atom = json.load(answer)["result"]
            assert atom["name"] == "invented marker row"
            assert atom["rootSource"] == "SNOMEDCT_US"
            assert fake_uts.fake.data.release == "2098AB"
            assert fake_uts.fake.count() == 1
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "--strict-markers").assert_outcomes(
        passed=1
    )


def test_factory_servers_are_distinct_and_stopped_after_the_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest
        SEEN = []

        def test_two(fake_uts_factory):
            one, two = fake_uts_factory(), fake_uts_factory(release="2097AA")
            SEEN.extend([one, two])
            assert one.base_url != two.base_url
            assert one.fake.data.release == "2099AA"
            assert two.fake.data.release == "2097AA"
            assert one.cache_dir != two.cache_dir

        def test_stopped_after():
            assert len(SEEN) == 2
            for server in SEEN:
                with pytest.raises(RuntimeError, match="not running"):
                    server.base_url
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_a_marker_with_an_unknown_argument_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.fake_uts(rowz=[])
        def test_typo(fake_uts):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*the fake_uts marker takes rows, meta, release and faults, not rowz*"]
    )


def test_a_rows_marker_that_cannot_be_read_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """One string for rows, a missing file, a row of the wrong width in a list or in a file: each
    is said as the marker's (as a META's is), not as a traceback."""
    row = "C7000001|ENG|P|L1|PF|S1|Y|A70000001||||SNOMEDCT_US|PT|555|invented row|0|N||"
    pytester.path.joinpath("bad.RRF").write_text("C9000001|bad|\n", "utf-8")
    pytester.makepyfile(
        f"""
        import pytest
        from pathlib import Path

        @pytest.mark.fake_uts(rows={row!r})
        def test_one_string(fake_uts):
            pass

        @pytest.mark.fake_uts(rows="no/such/MRCONSO.RRF")
        def test_no_file(fake_uts):
            pass

        @pytest.mark.fake_uts(rows=["C9000001|bad|"])
        def test_bad_line(fake_uts):
            pass

        @pytest.mark.fake_uts(rows=Path("bad.RRF"))
        def test_bad_file(fake_uts):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        [
            "*fake_uts rows takes a list of MRCONSO.RRF-format lines, or the Path of a file of "
            "them, not one string*",
            "*fake_uts rows: no such file no/such/MRCONSO.RRF*",
            "*fake_uts rows: <rows>, line 1: an MRCONSO.RRF row has 18 fields, each followed by "
            "'|'; this line has 2*",
            "*fake_uts rows: bad.RRF, line 1: an MRCONSO.RRF row has 18 fields, each followed by "
            "'|'; this line has 2*",
        ]
    )
    result.stdout.no_fnmatch_line("E *BadInputError: *")


def test_a_marker_with_faults_not_a_faults_is_a_type_error(pytester: pytest.Pytester) -> None:
    """A ``faults`` dict was accepted, and the server then dropped every connection: the test
    errors at its set-up instead, saying what to write, and no request is ever answered."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.fake_uts(faults={"rate": 0.3})
        def test_dict(fake_uts):
            raise AssertionError("never runs")
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_dict*",
            "*TypeError: faults takes a tempmedbench_synonyms.testing.Faults, not a dict "
            "({'rate': 0.3}): write faults=Faults(...) with those settings, such as "
            "Faults(rate=0.3, kinds=('429',))",
        ]
    )
    result.stdout.no_fnmatch_line("*never runs*")


#: The key of a user who keeps it in a file named by UMLS_API_KEY_FILE (invented): it must
#: never reach a fake.
USERS_KEY = "0a1b2c3d-0000-4000-8000-00000000beef"


def test_the_fixture_isolates_the_tests_own_process_and_puts_everything_back(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user whose profile sets the tool's variables calls the Python API in a test: the
    fixture's variables replace theirs while the test runs (the key, the base URL, the cache and
    rate-state folders), nothing lands in their home, and theirs are back after the test."""
    home = pytester.path  # pytester's HOME
    key_file = home / "umls-key"
    key_file.write_text(USERS_KEY + "\n", encoding="utf-8")
    key_file.chmod(0o600)
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "TEMPMEDBENCH_STATE_DIR",
                 "TEMPMEDBENCH_CACHE_DIR", "UMLS_API_KEY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UMLS_API_KEY_FILE", str(key_file))
    monkeypatch.setenv("UMLS_BASE_URL", "https://uts.invalid/rest")
    monkeypatch.setenv("TEMPMEDBENCH_GPS", str(home / "no-gps.zip"))
    pytester.makepyfile(
        """
        import os
        from tempmedbench_synonyms import regenerate
        from tempmedbench_synonyms.demo import demo_data

        def tool_variables():
            return {k: v for k, v in os.environ.items() if k.startswith(("UMLS_", "TEMPMEDBENCH_"))}

        BEFORE = tool_variables()

        def test_the_api_with_the_fakes_base_url(fake_uts, tmp_path):
            assert tool_variables() == fake_uts.variables
            report = regenerate(demo_data().release, base_url=fake_uts.base_url,
                                out=tmp_path / "out")
            assert (report.outcome, report.requests) == ("verified", 11)
            assert fake_uts.fake.count(200) == 11
            assert any(fake_uts.cache_dir.rglob("*.json"))
            assert [p.parent.name for p in fake_uts.state_dir.rglob("*.state")] == ["rate"]

        def test_the_api_with_no_base_url(fake_uts, tmp_path):
            report = regenerate(demo_data().release, out=tmp_path / "out")
            assert (report.outcome, fake_uts.fake.count(200)) == ("verified", 11)

        def test_the_tests_own_changes_are_undone_too(monkeypatch, fake_uts):
            monkeypatch.setenv("UMLS_API_KEY", "changed-by-the-test")
            monkeypatch.delenv("UMLS_BASE_URL")

        def test_the_first_server_of_the_factory_is_the_one_in_force(fake_uts_factory):
            first, second = fake_uts_factory(), fake_uts_factory()
            assert tool_variables() == first.variables != second.variables

        def test_the_users_variables_are_back():
            assert tool_variables() == BEFORE
            assert BEFORE["UMLS_API_KEY_FILE"].endswith("umls-key")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)
    assert USERS_KEY not in result.stdout.str() + result.stderr.str()
    # in the user's home: no .cache, no .local/state (pytester's own files and folders aside)
    assert sorted(
        p.name for p in home.iterdir()
        if not p.name.startswith("runpytest-") and p.name not in ("stdout", "stderr")
    ) == [
        "test_the_fixture_isolates_the_tests_own_process_and_puts_everything_back.py",
        "umls-key",
    ]  # fmt: skip


def test_the_default_fixture_and_the_meta_marker_serve_meta_files(
    pytester: pytest.Pytester,
) -> None:
    # SPEC 12: a concept MRCONSO lacks has no definitions, whatever MRDEF holds
    row = mrconso_row("C7000001", "A70000001", "MSH", "MH", "D7", "Invented thing")
    pytester.makefile(".RRF", MRCONSO=row)
    pytester.makefile(".RRF", MRDEF="C7000001|A70000001|AT1||MSH|An invented definition.|N||\n")
    pytester.makepyfile(
        """
        import json, pathlib, urllib.request
        import pytest

        def get(fake_uts, path):
            url = f"{fake_uts.base_url}{path}?apiKey={fake_uts.api_key}"
            with urllib.request.urlopen(url, timeout=10) as answer:
                return json.load(answer)["result"]

        def test_default(fake_uts):
            found = get(fake_uts, "/content/2099AA/CUI/C9000090/definitions")
            assert [d["rootSource"] for d in found] == ["MSH", "NCI"]

        @pytest.mark.fake_uts(meta=pathlib.Path.cwd(), release="2098AB")
        def test_meta(fake_uts):
            found = get(fake_uts, "/content/2098AB/CUI/C7000001/definitions")
            assert [d["value"] for d in found] == ["An invented definition."]
            assert [r.name for r in fake_uts.fake.data.rows] == ["Invented thing"]
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_a_meta_marker_that_cannot_be_served_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.mkdir("empty")
    # a row of the wrong width: the reader's bad input, said as the marker's, not a traceback
    (pytester.mkdir("bad") / "MRDEF.RRF").write_text("C9000001|A1|AT2||MSH|no CVF|N|\n", "utf-8")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.fake_uts(rows=[], meta="empty")
        def test_both(fake_uts):
            pass

        @pytest.mark.fake_uts(meta="no/such/folder")
        def test_no_folder(fake_uts):
            pass

        @pytest.mark.fake_uts(meta="empty")
        def test_no_files(fake_uts):
            pass

        @pytest.mark.fake_uts(meta="bad")
        def test_bad_row(fake_uts):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        [
            "*fake_uts takes rows or meta, not both*",
            "*fake_uts meta: no such folder no/such/folder*",
            "*fake_uts meta: empty holds none of MRCONSO.RRF, MRDEF.RRF, MRREL.RRF, MRSTY.RRF, "
            "MRHIER.RRF, MRSAB.RRF*",
            "*fake_uts meta: bad/MRDEF.RRF, line 1: an MRDEF.RRF row has 8 fields*this line has 7*",
        ]
    )
    result.stdout.no_fnmatch_line("E *BadInputError: *")
