"""The regeneration end to end on the invented mini release, with hand-written expectations."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from helpers import Rehash
from tempmedbench_synonyms.errors import BadInputError, SpanError
from tempmedbench_synonyms.mrconso.source import MrconsoSource
from tempmedbench_synonyms.regen import release as release_module
from tempmedbench_synonyms.regen.canonical import sha256_text
from tempmedbench_synonyms.regen.freeze import freeze
from tempmedbench_synonyms.regen.pipeline import check, regenerate
from tempmedbench_synonyms.regen.release import EXPECTED, FULL_TABLE, SYNONYM_SURFACE, TABLE


def lines_by_qid(path: Path) -> dict[str, str]:
    out = {}
    for raw in path.read_bytes().split(b"\n")[:-1]:
        obj = json.loads(raw)
        out[obj["qid"]] = raw.decode("utf-8")
    return out


def test_fixture_regenerates_verified_with_hand_checked_lines(mini: Path, mrconso: Path) -> None:
    report = regenerate(mini, MrconsoSource(mrconso))
    assert (report.outcome, report.exit_code, report.drifted, report.changed) == (
        "verified",
        0,
        [],
        [],
    )
    assert (report.concepts, report.questions, report.spans) == (10, 42, 70)
    assert report.routes == {"aui": 2, "cui": 2, "source": 6}
    assert all(f.match for f in report.files.values())
    lines = lines_by_qid(mini / SYNONYM_SURFACE)
    assert len(lines) == 42
    # Written out by hand from the fixture's atoms and SPEC sections 3 and 4:
    # capitalised span -> verbatim SY (the PT equals the span); lower-case anchor -> lower-cased
    # aui-route SY.
    assert lines["dev-0001"] == (
        '{"family":"EVENT_AT","qid":"dev-0001","question_surface":"Zephyrine pyrexia was recorded '
        'on which day after the pellucid bronchial inflammation?","split":"dev",'
        '"surface":"synonym"}'
    )
    # pinned FN; U+2028 stays raw inside the line
    assert lines["dev-0003"] == (
        '{"family":"ACTIVE_AT","qid":"dev-0003","question_surface":"Was glimmer pox (disorder) '
        'active\u2028on the day of the pellucid bronchial inflammation?","split":"dev",'
        '"surface":"synonym"}'
    )
    # emoji before two spans of one concept, one lower-case and one capitalised
    assert lines["dev-0005"] == (
        '{"family":"EVENT_AT","qid":"dev-0005","question_surface":"Patient note 📋: when did '
        'sjöberg–velvet cough begin, and when did Sjöberg–Velvet cough end?","split":"dev",'
        '"surface":"synonym"}'
    )
    # a name outside the BMP; a capitalised anchor of route cui in MTH (not the HL7 atom)
    assert lines["dev-0006"] == (
        '{"family":"DURING","qid":"dev-0006","question_surface":"Which Harrow syndrome type 𝟐 '
        'episode overlapped the Ambulatory care encounter?","split":"dev","surface":"synonym"}'
    )
    # RxNorm: the obsolete PT and the MTH PT are passed over; of the two SYs the first by norm
    # ("zorbatrex 50 mg tab"), not by raw name ("Zorbatrex 50mg tablet"); span at the start
    assert lines["dev-0016"] == (
        '{"family":"FIRST_AFTER","qid":"dev-0016","question_surface":"zorbatrex 50 mg tab was '
        'first given after which encounter?","split":"dev","surface":"synonym"}'
    )
    # adjacent spans of two concepts
    assert lines["test-0004"] == (
        '{"family":"EVENT_AT","qid":"test-0004","question_surface":"Which day: graft of moonstone'
        'glimmer pox (disorder)?","split":"test","surface":"synonym"}'
    )
    # titlecase span text: not its own lower(), so verbatim (isupper() would have lower-cased)
    assert lines["train-0014"] == (
        '{"family":"DURING","qid":"train-0014","question_surface":"Was Zephyrine pyrexia present '
        'during the ambulatory care encounter?","split":"train","surface":"synonym"}'
    )
    # "Harrow ſyndrome" casefolds to the span text and is dropped; "type 𝟐" is kept
    assert lines["test-0009"] == (
        '{"family":"DURATION","qid":"test-0009","question_surface":"How long did the Harrow '
        'syndrome type 𝟐 last?","split":"test","surface":"synonym"}'
    )
    # no concept at all: the line is still written, only "surface" changes
    assert lines["test-0010"] == (
        '{"family":"EVENT_AT","qid":"test-0010","question_surface":"No concept is named in this '
        'question.","split":"test","surface":"synonym"}'
    )
    full = (mini / FULL_TABLE).read_text(encoding="utf-8")
    assert (
        '    "quillon level": {\n'
        '      "aui": "A9000051",\n'
        '      "cui": "C9000050",\n'
        '      "route": "aui",\n'
        '      "sab": "LNC",\n'
        '      "spans": {\n'
        '        "dev-0009": [\n'
        "          [\n"
        "            18,\n"
        "            31\n"
        "          ]\n"
        "        ],\n"
    ) in full
    assert (
        '      "synonym": {\n'
        '        "aui": "A9000051",\n'
        '        "name": "Quillon [Mass/volume] in Serum",\n'
        '        "tty": "LN"\n'
        "      }\n"
        "    },\n"
        '    "zorbatrex 50 mg oral tablet": {\n'
    ) in full
    # a concept no question uses still gets its synonym, and the null aui is kept as null
    table = json.loads(full)
    assert table["concepts"]["9990106004"]["synonym"] == {
        "aui": "A9000061",
        "name": "Quartz arthropathy",
        "tty": "PT",
    }
    assert table["concepts"]["9990103007"]["aui"] is None
    assert table["generator"] == "invented fixture for tempmedbench-synonyms tests"
    assert '  "score_scale": 150.0,\n' in full  # 1.50E+2 in the input, re-spelled by json
    expected = json.loads((mini / EXPECTED).read_text())
    assert (
        expected["concepts"]["quillon level"]
        == hashlib.sha256(b"Quillon [Mass/volume] in Serum").hexdigest()
    )
    assert (
        hashlib.sha256((mini / FULL_TABLE).read_bytes()).hexdigest()
        == expected["files"][FULL_TABLE]
    )


def _change_atom(mrconso: Path, old: str, new: str) -> None:
    text = mrconso.read_text(encoding="utf-8")
    assert old in text
    mrconso.write_text(text.replace(old, new), encoding="utf-8")


def test_a_changed_atom_is_a_mismatch_naming_the_concept(mini: Path, mrconso: Path) -> None:
    _change_atom(mrconso, "|Zephyrine pyrexia|", "|Zephyrine fever|")
    report = regenerate(mini, MrconsoSource(mrconso))
    assert (report.outcome, report.exit_code) == ("mismatch", 1)
    assert report.drifted == []
    assert report.changed == ["9990101009"]
    assert {k: f.match for k, f in report.files.items()} == {
        SYNONYM_SURFACE: False,
        FULL_TABLE: False,
    }
    assert not (mini / SYNONYM_SURFACE).exists()
    assert not (mini / FULL_TABLE).exists()
    unverified = mini / (SYNONYM_SURFACE + ".unverified")
    assert "Zephyrine fever was recorded" in unverified.read_text(encoding="utf-8")
    assert report.files[SYNONYM_SURFACE].written == str(unverified)


def test_a_drifted_concept_keeps_its_text_and_gets_null(mini: Path, mrconso: Path) -> None:
    _change_atom(
        mrconso,
        "|A9000051||99901-5||LNC|LN|99901-5|Quillon [Mass/volume] in Serum|0|N|",
        "|A9000051||99901-5||LNC|LN|99901-5|Quillon [Mass/volume] in Serum|0|O|",
    )
    report = regenerate(mini, MrconsoSource(mrconso))
    assert (report.outcome, report.drifted) == ("mismatch", ["quillon level"])
    assert report.drift_reasons == {
        "quillon level": "atom A9000051 is no longer usable (obsolete, suppressible, another "
        "source or language)"
    }
    full = json.loads((mini / (FULL_TABLE + ".unverified")).read_text(encoding="utf-8"))
    assert full["concepts"]["quillon level"]["synonym"] is None
    lines = lines_by_qid(mini / (SYNONYM_SURFACE + ".unverified"))
    assert (
        "When was the last quillon level before the ambulatory care encounter?" in lines["dev-0009"]
    )


def test_a_verified_file_is_never_replaced_by_a_mismatch(mini: Path, mrconso: Path) -> None:
    assert regenerate(mini, MrconsoSource(mrconso)).outcome == "verified"
    good = (mini / SYNONYM_SURFACE).read_bytes()
    _change_atom(mrconso, "|Graft of moonstone|", "|Graft of opal|")
    assert regenerate(mini, MrconsoSource(mrconso)).outcome == "mismatch"
    assert (mini / SYNONYM_SURFACE).read_bytes() == good
    assert (mini / (SYNONYM_SURFACE + ".unverified")).exists()
    _change_atom(mrconso, "|Graft of opal|", "|Graft of moonstone|")
    assert regenerate(mini, MrconsoSource(mrconso)).outcome == "verified"
    assert not (mini / (SYNONYM_SURFACE + ".unverified")).exists()  # the stale one is gone


def test_out_dir_leaves_the_release_alone(mini: Path, mrconso: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = regenerate(mini, MrconsoSource(mrconso), out_dir=out)
    assert report.outcome == "verified"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        SYNONYM_SURFACE,
        FULL_TABLE,
    ]
    assert not (mini / SYNONYM_SURFACE).exists()
    assert check(mini, out_dir=out).outcome == "verified"


def test_check_needs_no_source_and_diagnoses(mini: Path, mrconso: Path) -> None:
    missing = check(mini)
    assert (missing.outcome, missing.exit_code) == ("mismatch", 1)
    assert all(f.actual is None for f in missing.files.values())
    assert (
        missing.hint is not None
        and "run `tempmedbench-regenerate-synonyms RELEASE` first" in missing.hint
    )
    regenerate(mini, MrconsoSource(mrconso))
    ok = check(mini)
    assert (ok.outcome, ok.drifted, ok.changed) == ("verified", [], [])
    (mini / FULL_TABLE).write_text(
        (mini / FULL_TABLE)
        .read_text(encoding="utf-8")
        .replace('"name": "Graft of moonstone"', '"name": "Graft of opal"'),
        encoding="utf-8",
    )
    bad = check(mini)
    assert (bad.outcome, bad.changed) == ("mismatch", ["9990105000"])
    assert bad.files[FULL_TABLE].match is False and bad.files[SYNONYM_SURFACE].match is True


def test_check_reads_a_rebuilt_full_table_over_the_limit_no_further(
    mini: Path, mrconso: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Its diagnosis reads the rebuilt full table whole: bounded like the release's files (a
    sparse one over the lowered limit), it is a mismatch with one warning, not a MemoryError."""
    regenerate(mini, MrconsoSource(mrconso))
    monkeypatch.setattr(release_module, "RELEASE_FILE_LIMIT", 100_000)
    os.truncate(mini / FULL_TABLE, 100_001)
    report = check(mini)
    assert (report.outcome, report.drifted, report.changed) == ("mismatch", [], [])
    assert [r.getMessage() for r in caplog.records] == [
        f"{mini / FULL_TABLE} cannot be read as a full table; no per-concept diagnosis"
    ]


def test_overridden_release_is_reported_and_the_table_keeps_its_own(
    mini: Path, mrconso: Path
) -> None:
    report = regenerate(mini, MrconsoSource(mrconso), umls_release="2099AB")
    assert report.umls_release == "2099AB"
    assert report.outcome == "verified"  # same atoms, so the same bytes
    assert json.loads((mini / FULL_TABLE).read_text())["umls_release"] == "2099AA"


def test_spans_are_checked_before_any_atom_is_read(
    mini: Path, rehash: Rehash, tmp_path: Path
) -> None:
    data = json.loads((mini / TABLE).read_text(encoding="utf-8"))
    data["concepts"]["9990102002"]["spans"]["dev-0001"] = [[5, 15]]
    (mini / TABLE).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    rehash(mini)
    with pytest.raises(SpanError) as info:
        regenerate(mini, MrconsoSource(tmp_path / "does-not-exist.RRF"))
    assert str(info.value) == (
        "synonyms/synonym_table_kept.json: qid 'dev-0001': two spans overlap: "
        "'9990101009' [0, 12], '9990102002' [5, 15]"
    )
    assert not (mini / SYNONYM_SURFACE).exists()
    assert not (mini / (SYNONYM_SURFACE + ".unverified")).exists()


def test_freeze_writes_the_same_expected_file(mini: Path, mrconso: Path) -> None:
    before = (mini / EXPECTED).read_bytes()
    (mini / EXPECTED).write_text("not even json")
    report = freeze(mini, MrconsoSource(mrconso), update_manifest=True, force=True)
    assert report.exit_code == 0
    assert (mini / EXPECTED).read_bytes() == before
    assert regenerate(mini, MrconsoSource(mrconso)).outcome == "verified"


def test_a_second_forced_freeze_never_overwrites_the_backup(mini: Path, mrconso: Path) -> None:
    """The first ``freeze --force`` keeps the authors' hashes in .bak; the second is refused
    (exit 2, before anything is read or written) rather than replace them with its own."""
    original = (mini / EXPECTED).read_bytes()
    assert freeze(mini, MrconsoSource(mrconso), force=True).exit_code == 0
    backup = mini / (EXPECTED + ".bak")
    assert backup.read_bytes() == original
    _change_atom(mrconso, "|Graft of moonstone|", "|Graft of opal|")
    first = (mini / EXPECTED).read_bytes()
    with pytest.raises(BadInputError) as info:
        freeze(mini, MrconsoSource(mrconso), force=True)
    assert (info.value.exit_code, str(info.value), info.value.hint) == (
        2,
        f"{backup}: exists already: it keeps the hashes an earlier `freeze --force` replaced, "
        "and this freeze would overwrite them",
        "move expected_sha256.json.bak away (or delete it, if its hashes are no longer needed), "
        "then rerun freeze --force",
    )
    assert (backup.read_bytes(), (mini / EXPECTED).read_bytes()) == (original, first)


def test_freeze_records_the_release_it_fetched_and_the_full_table_keeps_the_tables(
    mini: Path, mrconso: Path
) -> None:
    """With --umls-release, expected_sha256.json names the release the atoms came from (what a
    user must fetch to verify); the full table, whose bytes it hashes, keeps the input's."""
    report = freeze(
        mini, MrconsoSource(mrconso), umls_release="2099AB", update_manifest=True, force=True
    )
    assert report.exit_code == 0
    assert json.loads((mini / EXPECTED).read_text())["umls_release"] == "2099AB"
    verified = regenerate(mini, MrconsoSource(mrconso), umls_release="2099AB")
    assert verified.outcome == "verified"
    assert json.loads((mini / FULL_TABLE).read_text())["umls_release"] == "2099AA"


def test_freeze_without_update_manifest_says_so(mini: Path, mrconso: Path) -> None:
    _change_atom(mrconso, "|Graft of moonstone|", "|Graft of opal|")
    report = freeze(mini, MrconsoSource(mrconso), force=True)
    assert json.loads((mini / EXPECTED).read_text())["concepts"]["9990105000"] == sha256_text(
        "Graft of opal"
    )
    assert report.hint is not None and "--update-manifest" in report.hint
    with pytest.raises(BadInputError, match=r"differs from MANIFEST\.sha256"):
        regenerate(mini, MrconsoSource(mrconso))


def test_freeze_refuses_drift_and_writes_nothing(mini: Path, mrconso: Path) -> None:
    _change_atom(mrconso, "|A9000023|", "|A9000099|")  # the pinned atom of 9990102002 is gone
    before = (mini / EXPECTED).read_bytes()
    report = freeze(mini, MrconsoSource(mrconso), update_manifest=True, force=True)
    assert (report.outcome, report.drifted) == ("mismatch", ["9990102002"])
    assert (mini / EXPECTED).read_bytes() == before


def test_concept_hash_is_of_the_verbatim_name_not_the_insertion(mini: Path) -> None:
    # SPEC section 4: the SHA-256 of the kept atom's name, not of the lower-cased insertion;
    # 9990103007 is inserted as "sjöberg–velvet cough" in dev-0004
    expected = json.loads((mini / EXPECTED).read_text())
    assert (
        expected["concepts"]["9990103007"]
        == hashlib.sha256(b"Sj\xc3\xb6berg\xe2\x80\x93Velvet cough").hexdigest()
    )


def test_a_synonym_key_in_the_input_is_replaced(mini: Path, mrconso: Path, rehash: Rehash) -> None:
    data = json.loads((mini / TABLE).read_text(encoding="utf-8"))
    data["concepts"]["9990106004"]["synonym"] = "stale"
    data["concepts"]["9990106004"]["weight"] = 1.5e2
    (mini / TABLE).write_text(
        json.dumps(data, ensure_ascii=False).replace("150.0", "1.50E+2"), encoding="utf-8"
    )
    rehash(mini)
    regenerate(mini, MrconsoSource(mrconso))
    full = (mini / (FULL_TABLE + ".unverified")).read_text(encoding="utf-8")
    entry = json.loads(full)["concepts"]["9990106004"]
    assert entry["synonym"] == {"aui": "A9000061", "name": "Quartz arthropathy", "tty": "PT"}
    assert '      "weight": 150.0\n' in full


def test_a_concept_without_a_frozen_hash_counts_as_changed(
    mini: Path, mrconso: Path, rehash: Rehash
) -> None:
    data = json.loads((mini / EXPECTED).read_text())
    del data["concepts"]["quillon level"]
    (mini / EXPECTED).write_text(json.dumps(data))
    rehash(mini)
    report = regenerate(mini, MrconsoSource(mrconso))
    assert (report.outcome, report.changed) == ("verified", ["quillon level"])


def test_without_concept_hashes_the_hint_says_so(mini: Path, mrconso: Path, rehash: Rehash) -> None:
    data = json.loads((mini / EXPECTED).read_text())
    del data["concepts"]
    data["files"][FULL_TABLE] = "0" * 64
    (mini / EXPECTED).write_text(json.dumps(data))
    rehash(mini)
    report = regenerate(mini, MrconsoSource(mrconso))
    assert (report.outcome, report.changed) == ("mismatch", [])
    assert report.hint == (
        "expected_sha256.json has no per-concept hashes, so which concepts changed cannot be "
        "told; the .unverified files show what was rebuilt"
    )


def test_drift_of_a_concept_no_question_uses(mini: Path, mrconso: Path) -> None:
    # SPEC section 5 wins over the "written as .unverified" of section 4: a file goes to its final
    # path exactly when its hash matches. Drift of a concept with no spans leaves the surface
    # unchanged, so the surface is verified and placed; the full table is not; outcome mismatch.
    _change_atom(mrconso, "|Quartz arthropathy|0|N|", "|Quartz arthropathy|0|O|")
    _change_atom(mrconso, "|Quartz joint disease|0|N|", "|Quartz joint disease|0|E|")
    report = regenerate(mini, MrconsoSource(mrconso))
    assert (report.outcome, report.drifted) == ("mismatch", ["9990106004"])
    assert {k: f.match for k, f in report.files.items()} == {
        SYNONYM_SURFACE: True,
        FULL_TABLE: False,
    }
    assert (mini / SYNONYM_SURFACE).exists() and not (mini / FULL_TABLE).exists()
    assert (mini / (FULL_TABLE + ".unverified")).exists()


def test_files_are_written_with_the_umask_mode(mini: Path, mrconso: Path) -> None:
    old = os.umask(0o022)
    try:
        regenerate(mini, MrconsoSource(mrconso))
    finally:
        os.umask(old)
    assert stat.S_IMODE((mini / SYNONYM_SURFACE).stat().st_mode) == 0o644
    assert stat.S_IMODE((mini / FULL_TABLE).stat().st_mode) == 0o644
    assert [p.name for p in mini.rglob("*.tmp")] == []


def test_an_output_that_cannot_be_written_is_bad_input(
    mini: Path, mrconso: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("")
    with pytest.raises(BadInputError) as info:
        regenerate(mini, MrconsoSource(mrconso), out_dir=blocker)
    assert (
        str(info.value)
        == f"{blocker}: is not a folder: the output files cannot be written under it"
    )
    assert info.value.hint == (
        "write the rebuilt files elsewhere with --out DIR, a folder you can write in"
    )


def test_an_empty_release_override_is_refused(mini: Path, mrconso: Path) -> None:
    with pytest.raises(BadInputError, match="--umls-release is empty"):
        regenerate(mini, MrconsoSource(mrconso), umls_release=" ")


# A release small enough to rebuild by hand. Every expected byte below was written out by hand
# from SPEC sections 3 and 4, and every digest computed outside this package (`sha256sum`).
HAND_TABLE = (
    '{"format_version": 1, "umls_release": "2099AA", "language": "ENG", "concepts": '
    '{"9990101009": {"cui": "C9000001", "sab": "SNOMEDCT_US", "route": "source", '
    '"code": "1000001", "spans": {"q1": [[8, 13]]}}}}\n'
)
HAND_SURFACE = (
    '{"qid": "q1", "question_surface": "Did the Fever start?", "surface": "anchored", "extra": 1}\n'
    '{"qid": "q2", "question_surface": "Nothing here."}\n'
)
HAND_MRCONSO = [
    # PT "Fever" equals the span text: dropped. "Ardor" is suppressible (O), "Brûlure" French:
    # not candidates, though each would sort first. Of "Pyrexia" and "Calor", "calor" sorts first.
    "C9000001|ENG|P|L1|PF|S1|Y|A9000001||1000001||SNOMEDCT_US|PT|1000001|Fever|9|N||",
    "C9000001|ENG|S|L2|PF|S2|Y|A9000002||1000001||SNOMEDCT_US|SY|1000001|Pyrexia|9|N||",
    "C9000001|ENG|S|L3|PF|S3|Y|A9000003||1000001||SNOMEDCT_US|SY|1000001|Calor|9|N||",
    "C9000001|ENG|S|L4|PF|S4|Y|A9000004||1000001||SNOMEDCT_US|SY|1000001|Ardor|9|O||",
    "C9000001|FRE|S|L5|PF|S5|Y|A9000005||1000001||SNOMEDCT_US|SY|1000001|Brûlure|9|N||",
]
# "Fever" has an uppercase letter: "Calor" goes in verbatim; "surface" becomes "synonym".
HAND_SYNONYM_SURFACE = (
    b'{"extra":1,"qid":"q1","question_surface":"Did the Calor start?","surface":"synonym"}\n'
    b'{"qid":"q2","question_surface":"Nothing here."}\n'
)
HAND_FULL_TABLE = b"""{
  "concepts": {
    "9990101009": {
      "code": "1000001",
      "cui": "C9000001",
      "route": "source",
      "sab": "SNOMEDCT_US",
      "spans": {
        "q1": [
          [
            8,
            13
          ]
        ]
      },
      "synonym": {
        "aui": "A9000003",
        "name": "Calor",
        "tty": "SY"
      }
    }
  },
  "format_version": 1,
  "language": "ENG",
  "umls_release": "2099AA"
}
"""
HAND_DIGESTS = {
    SYNONYM_SURFACE: "dc9c50ef6fc79bd828980234375402fe922d844aa001cdd3123ac7d15bd03150",
    FULL_TABLE: "871ee263943a694646559588d69f795a5a9c731447622fa19384ccf6ae465729",
}
CALOR_DIGEST = "7841f970ba5fa0cf6e6151b91f8f98b20c105123be84aac2bffa1ecc40a01a40"  # sha256("Calor")


def test_a_release_rebuilt_by_hand_matches_to_the_byte(tmp_path: Path, rehash: Rehash) -> None:
    folder = tmp_path / "hand"
    (folder / "synonyms").mkdir(parents=True)
    (folder / "question_surface").mkdir()
    (folder / "synonym_regeneration").mkdir()
    (folder / TABLE).write_text(HAND_TABLE, encoding="utf-8")
    (folder / "question_surface/question_surface.jsonl").write_text(HAND_SURFACE, "utf-8")
    expected = {
        "format_version": 1,
        "umls_release": "2099AA",
        "files": HAND_DIGESTS,
        "concepts": {"9990101009": CALOR_DIGEST},
    }
    (folder / EXPECTED).write_text(json.dumps(expected), encoding="utf-8")
    rehash(folder)
    mrconso = tmp_path / "MRCONSO.RRF"
    mrconso.write_text("".join(row + "\n" for row in HAND_MRCONSO), encoding="utf-8")
    # the literals and their digests agree (a typo in either would show here first)
    assert hashlib.sha256(HAND_SYNONYM_SURFACE).hexdigest() == HAND_DIGESTS[SYNONYM_SURFACE]
    assert hashlib.sha256(HAND_FULL_TABLE).hexdigest() == HAND_DIGESTS[FULL_TABLE]

    report = regenerate(folder, MrconsoSource(mrconso))

    assert (report.outcome, report.drifted, report.changed) == ("verified", [], [])
    assert (folder / SYNONYM_SURFACE).read_bytes() == HAND_SYNONYM_SURFACE
    assert (folder / FULL_TABLE).read_bytes() == HAND_FULL_TABLE


def test_the_mini_release_hashes_are_pinned_here_too(mini: Path) -> None:
    """A refreeze of the fixture must be a visible change to this test, not a silent one."""
    files = json.loads((mini / EXPECTED).read_bytes())["files"]
    assert files == {
        SYNONYM_SURFACE: "8857b95d5bbf233450e7f9cba57c9733c5f940e7b44f55e89ccefd0f20f66eb1",
        FULL_TABLE: "158e51151f9cc30b8bb05d6f57266f64ee2c27005c400fbc9416996945a2fa21",
    }
