"""The ``gps`` commands, run through a local Typer app as the main app will mount them."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from helpers import FIXTURES, GPS_FILE
from tempmedbench_synonyms import __version__
from tempmedbench_synonyms.cli.gps import gps_app

RF2_DIR = FIXTURES / "gps" / "rf2"
PLANTED = FIXTURES / "gps-planted"

app = typer.Typer()
app.add_typer(gps_app, name="gps")


@app.callback()
def _root() -> None:
    """A stand-in for the main app."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["gps", *map(str, args)], env={"TEMPMEDBENCH_GPS": None})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def clean_release(tmp_path: Path) -> Path:
    """The planted fixture's records that carry no finding (see tests/snomed/test_validate.py)."""
    root = tmp_path / "clean"
    (root / "artifacts").mkdir(parents=True)
    keep = {
        "artifacts/events_canonical.jsonl": {1, 12, 13, 14},
        "artifacts/questions.jsonl": {1, 2, 5, 6},
    }
    for rel, lines in keep.items():
        src = (PLANTED / rel).read_text("utf-8").split("\n")[:-1]
        (root / rel).write_text("".join(src[n - 1] + "\n" for n in sorted(lines)), "utf-8")
    return root


@pytest.mark.parametrize("source", [GPS_FILE, RF2_DIR], ids=["gps", "rf2"])
def test_validate_clean_exits_0(clean_release: Path, source: Path) -> None:
    code, out, err = run("validate", clean_release, "--gps", source)
    assert code == 0
    assert out == ""
    assert err.splitlines()[-1] == "clean: every SNOMED CT field matches the release"
    assert (
        "checked 4 records in artifacts/events_canonical.jsonl, "
        "4 records in artifacts/questions.jsonl"
    ) in err


@pytest.mark.parametrize("source", [GPS_FILE, RF2_DIR], ids=["gps", "rf2"])
def test_validate_planted_json(source: Path) -> None:
    code, out, err = run("validate", PLANTED, "--gps", source, "--json")
    assert code == 1
    report = json.loads(out)
    assert report["exit_code"] == 1
    assert report["outcome"] == "findings"
    assert report["counts"] == {
        "SCTID_FORMAT": 1,
        "SCTID_PARTITION": 1,
        "SCTID_CHECKDIGIT": 1,
        "NOT_IN_RELEASE": 1,
        "INACTIVE_IN_RELEASE": 1,
        "FSN_MISMATCH": 1,
        "PT_MISMATCH": 1,
        "LABEL_MISMATCH": 1,
        "RELATED_CONDITION_MISMATCH": 1,
        "UNEXPECTED_TERM": 1,
        "LABEL_CONCEPT_HAS_SNOMED_FIELD": 1,
        "CODE_MISMATCH": 1,
    }
    assert len(report["findings"]) == 12
    assert report["findings"][1] == {
        "code": "PT_MISMATCH",
        "file": "artifacts/events_canonical.jsonl",
        "line": 3,
        "record": "ev-p03",
        "field": "snomed_pt",
        "expected": "Hemovex anemia",
        "found": "Haemovex anaemia",
        "message": "snomed_pt differs from the US preferred term of 9000000002006",
    }
    assert report["gps"]["release_date"] == "20990101"
    assert report["release"] == str(PLANTED)
    # --json keeps stdout for the report; the findings themselves are not repeated on stderr.
    assert "PT_MISMATCH snomed_pt" not in err
    assert err.splitlines()[-1] == "12 findings: the artifacts differ from the release"


def test_validate_planted_human_lines() -> None:
    code, out, err = run("validate", PLANTED, "--gps", GPS_FILE, "--limit", "2")
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert lines[2:5] == [
        (
            "artifacts/events_canonical.jsonl:2: ev-p02 FSN_MISMATCH snomed_fsn: "
            "expected 'Cobalt-wing nephritis (disorder)', found 'Cobalt wing nephritis (disorder)'"
        ),
        (
            "artifacts/events_canonical.jsonl:3: ev-p03 PT_MISMATCH snomed_pt: "
            "expected 'Hemovex anemia', found 'Haemovex anaemia'"
        ),
        "... 10 more (see --json, or --limit -1)",
    ]
    assert "UNEXPECTED_TERM: 1" in lines


def test_validate_quiet_prints_nothing_but_exits_1() -> None:
    code, out, err = run("validate", PLANTED, "--gps", GPS_FILE, "-q")
    assert (code, out, err) == (1, "", "")


def test_validate_gps_from_environment(clean_release: Path) -> None:
    result = CliRunner().invoke(
        app, ["gps", "validate", str(clean_release)], env={"TEMPMEDBENCH_GPS": str(GPS_FILE)}
    )
    assert (result.exit_code, result.stdout) == (0, "")
    # The GPS named by the variable is the one read.
    assert result.stderr.splitlines() == [
        f"GPS: {GPS_FILE} (gps-tsv, release 20990101, sha256 {sha256(GPS_FILE)}): "
        "19 concepts, 17 active",
        "checked 4 records in artifacts/events_canonical.jsonl, "
        "4 records in artifacts/questions.jsonl",
        "clean: every SNOMED CT field matches the release",
    ]


def test_validate_bad_gps_exits_2_with_json(tmp_path: Path) -> None:
    missing = tmp_path / "nope.zip"
    code, out, err = run("validate", PLANTED, "--gps", missing, "--json")
    assert code == 2
    report = json.loads(out)
    assert report["outcome"] == "bad_input"
    assert report["exit_code"] == 2
    assert report["message"] == f"{missing}: no such file or folder"
    assert report["findings"] == [] and report["counts"] == {}
    assert err.splitlines()[0] == f"error: {missing}: no such file or folder"


def test_validate_missing_artifact_exits_2(tmp_path: Path) -> None:
    root = tmp_path / "r"
    shutil.copytree(PLANTED, root)
    (root / "artifacts" / "questions.jsonl").unlink()
    code, out, err = run("validate", root, "--gps", GPS_FILE)
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"error: {root}/artifacts/questions.jsonl: the file is missing"


def test_validate_malformed_line_exits_2(tmp_path: Path) -> None:
    root = tmp_path / "r"
    shutil.copytree(PLANTED, root)
    with (root / "artifacts" / "events_canonical.jsonl").open("a", encoding="utf-8") as f:
        f.write("{not json}\n")
    code, out, err = run("validate", root, "--gps", GPS_FILE)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "error: artifacts/events_canonical.jsonl, line 15: invalid JSON: Expecting property name "
        "enclosed in double quotes (column 2)"
    ]


def test_validate_nan_is_bad_input_and_the_json_report_stays_json(tmp_path: Path) -> None:
    root = tmp_path / "r"
    shutil.copytree(PLANTED, root)
    with (root / "artifacts" / "questions.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"qid": "q-nan", "predicate": {"concept": "x"}, "concept_snomed_pt": NaN}\n')
    code, out, err = run("validate", root, "--gps", GPS_FILE, "--json")
    assert code == 2
    message = (
        "artifacts/questions.jsonl, line 7: invalid JSON: NaN is not a JSON value "
        "(RFC 8259 has no NaN or Infinity)"
    )
    assert json.loads(out) == {
        "outcome": "bad_input",
        "exit_code": 2,
        "message": message,
        "hint": None,
        "findings": [],
        "counts": {},
        "schema_version": 1,
        "tool_version": __version__,
    }
    assert err.splitlines() == [f"error: {message}"]


def test_validate_a_newline_less_artifact_exits_2_naming_its_line(tmp_path: Path) -> None:
    """2 MiB with no line end in questions.jsonl (3 GB of it was MemoryError, exit 70)."""
    root = tmp_path / "r"
    shutil.copytree(PLANTED, root)
    with (root / "artifacts" / "questions.jsonl").open("ab") as f:
        f.write(b"x" * (2 << 20))
    code, out, err = run("validate", root, "--gps", GPS_FILE, "--json")
    message = (
        "artifacts/questions.jsonl, line 7: a line longer than 1048576 bytes; an artifact has no "
        "such line"
    )
    doc = json.loads(out)
    assert (code, doc["exit_code"], doc["message"], doc["findings"]) == (2, 2, message, [])
    assert err.splitlines() == [
        f"error: {message}",
        "hint: each line of an artifact is one JSON record; write the file again",
    ]


def test_validate_encrypted_gps_zip_exits_2(tmp_path: Path) -> None:
    z = tmp_path / "gps.zip"
    member = f"x/{GPS_FILE.name}"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(GPS_FILE, member)
    data = bytearray(z.read_bytes())
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 0x01  # the "encrypted" flag of the central directory header
    z.write_bytes(bytes(data))
    code, out, err = run("validate", PLANTED, "--gps", z)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {z}!{member}: the member is encrypted (a password is required to read it)",
        "hint: extract the .txt, or zip it again with standard deflate",
    ]


def test_lookup_found_and_missing() -> None:
    code, out, err = run("lookup", "9000000002006", "9000000010007", "--gps", RF2_DIR, "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["outcome"], data["exit_code"]) == ("found", 0)
    missing = json.loads(run("lookup", "22298007", "--gps", RF2_DIR, "--json")[1])
    assert (missing["outcome"], missing["exit_code"]) == ("not_found", 1)
    unusable = run("lookup", "22298007", "--gps", RF2_DIR / "nowhere", "--json")
    assert unusable[0] == 2
    doc = json.loads(unusable[1])
    assert sorted(doc) == [
        "concepts", "exit_code", "hint", "message", "outcome", "schema_version", "tool_version"
    ]  # fmt: skip
    assert (doc["outcome"], doc["exit_code"], doc["concepts"]) == ("bad_input", 2, [])
    assert doc["message"].startswith(f"{RF2_DIR / 'nowhere'}: ")
    assert data["concepts"] == [
        {
            "id": "9000000002006",
            "in_release": True,
            "active": True,
            "fsn": "Hemovex anemia (disorder)",
            "us_preferred_term": "Hemovex anemia",
            "sctid_problems": [],
        },
        {
            "id": "9000000010007",
            "in_release": True,
            "active": False,
            "fsn": "Ghostmoor syndrome (disorder)",
            "us_preferred_term": None,
            "sctid_problems": [],
        },
    ]
    code, out, err = run("lookup", "9000000002006", "22298007", "--gps", GPS_FILE)
    answer = [
        "9000000002006: active",
        "  FSN: 'Hemovex anemia (disorder)'",
        "  US preferred term: 'Hemovex anemia'",
        "22298007: not in the release (SCTID_CHECKDIGIT)",
    ]
    assert (code, out.splitlines()) == (1, answer)  # the answer is data: stdout
    assert len(err.splitlines()) == 1 and err.startswith("GPS: ")  # where it came from: stderr
    code, out, err = run("lookup", "9000000002006", "22298007", "--gps", GPS_FILE, "-q")
    assert (code, out.splitlines(), err) == (1, answer, "")


def test_sctid_command() -> None:
    code, out, err = run("sctid", "22298006", "456191000124101")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "22298006: valid concept identifier: short format, partition 00 (concept), check digit 6",
        (
            "456191000124101: valid concept identifier; an extension identifier (partition 10): "
            "long format, partition 10 (concept), namespace 1000124, check digit 1"
        ),
    ]
    code, out, _ = run("sctid", "22298007", "--json")
    assert code == 1
    [info] = json.loads(out)["sctids"]
    assert (info["valid"], info["check_digit"], info["expected_check_digit"]) == (False, "7", "6")
    assert [p["code"] for p in info["problems"]] == ["SCTID_CHECKDIGIT"]


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("validate", "TempMedBench-1.0 \\"),  # continued: --gps SnomedCT_GPS.zip
        ("lookup", "22298006 --gps SnomedCT_GPS.zip"),
        ("sctid", "22298006 456191000124101"),
    ],
)
def test_help_has_one_example_on_one_line(command: str, example: str) -> None:
    """One example each, whole on one line of an 80-column terminal, so that it can be copied."""
    result = CliRunner().invoke(app, ["gps", command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    lines = [line.strip() for line in result.stdout.splitlines()]
    assert lines.count("Example:") == 1
    after = lines[lines.index("Example:") + 1 :]
    assert next(line for line in after if line) == f"tempmedbench-synonyms gps {command} {example}"


def test_a_gps_zip_bomb_is_bad_input_with_a_json_report(tmp_path: Path) -> None:
    """A zip whose GPS member declares 3 GB (the bomb's header; the bytes are never unpacked)."""
    z = tmp_path / "SnomedCT_GPS.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(GPS_FILE, f"g/{GPS_FILE.name}")
    data = bytearray(z.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(signature) + offset
        data[at : at + 4] = (3_000_000_000).to_bytes(4, "little")
    z.write_bytes(bytes(data))
    code, out, err = run("validate", PLANTED, "--gps", z, "--json")
    message = (
        f"{z}!g/{GPS_FILE.name}: the member declares 3000000000 bytes once unpacked, more than "
        "the 268435456 bytes (256 MiB) such a file can have; this is not the file it claims to "
        "be (or a zip bomb)"
    )
    assert code == 2
    assert err.splitlines()[0] == f"error: {message}"
    assert json.loads(out)["message"] == message


def test_a_zip_of_1000_candidate_members_gives_a_bounded_message(tmp_path: Path) -> None:
    # 1,000 names would be some 30 KB of message unbounded: as telling as 100,000, and quicker.
    z = tmp_path / "many.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for i in range(1_000):
            zf.writestr(f"m{i:06d}/x_GPSRelease_{i}.txt", b"")
    code, out, err = run("validate", PLANTED, "--gps", z, "--json")
    shown = ", ".join(f"m{i:06d}/x_GPSRelease_{i}.txt" for i in range(10))
    message = f"{z}: no of the 1000 members ({shown}, and 990 more) look like the GPS file"
    assert code == 2
    assert json.loads(out)["message"] == message
    assert len(err) < 1000


def test_the_artifacts_folder_itself_says_pass_the_parent(tmp_path: Path) -> None:
    release = tmp_path / "release"
    shutil.copytree(FIXTURES / "tempmedbench-mini", release)
    artifacts = release / "artifacts"
    result = CliRunner().invoke(
        app, ["gps", "validate", str(artifacts), "--gps", str(GPS_FILE), "--json"]
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {artifacts}: this is the artifacts folder itself: it holds "
        "events_canonical.jsonl or questions.jsonl, not artifacts/events_canonical.jsonl",
        f"hint: pass the parent folder, the release folder: {release.resolve()}",
    ]
    assert json.loads(result.stdout)["outcome"] == "bad_input"


def test_a_zipped_release_is_told_to_unzip_it(tmp_path: Path) -> None:
    archive = tmp_path / "TempMedBench-1.0.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("TempMedBench-1.0/artifacts/questions.jsonl", "{}\n")
    result = CliRunner().invoke(app, ["gps", "validate", str(archive), "--gps", str(GPS_FILE)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {archive}: not a folder",
        "hint: it is a zip archive: unzip it (unzip TempMedBench-1.0.zip) and pass the release "
        "folder (the one holding artifacts/)",
    ]
