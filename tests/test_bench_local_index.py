"""The invented META of bench/bench_local_index.py has the layout the index reads (a small one)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from tempmedbench_synonyms.cli.umls import umls_app
from tempmedbench_synonyms.mrconso.engine import COLUMNS

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
from bench_local_index import FILES, generate_meta
from floor_relations import connect, relations


def test_the_generated_meta_has_each_files_fields_counts_and_order(tmp_path: Path) -> None:
    generate_meta(tmp_path / "a", 0.001)
    rows = {}
    for name in FILES:
        lines = (tmp_path / "a" / f"{name}.RRF").read_text(encoding="utf-8").splitlines()
        rows[name] = [line.split("|") for line in lines]
        assert {len(r) for r in rows[name]} == {len(COLUMNS[name]) + 1}, name
        assert {r[-1] for r in rows[name]} == {""}, name
    counts = {name: len(r) for name, r in rows.items()}
    assert counts == {"MRCONSO": 2000, "MRDEF": 100, "MRREL": 4000, "MRSTY": 667,
                      "MRHIER": 1000, "MRSAB": 26}  # fmt: skip
    cuis = [r[0] for r in rows["MRCONSO"]]
    auis = {r[7] for r in rows["MRCONSO"]}
    assert cuis == sorted(cuis) and len(auis) == 2000
    assert [r[0] for r in rows["MRSTY"]] == sorted(set(cuis))  # one a concept
    assert len({r[8] for r in rows["MRREL"]}) == 4000  # RUIs unique
    assert {r[0] for r in rows["MRREL"]} | {r[4] for r in rows["MRREL"]} <= set(cuis)
    assert {r[1] for r in rows["MRREL"]} | {r[5] for r in rows["MRREL"]} <= auis | {""}
    assert {r[1] for r in rows["MRDEF"]} | {r[1] for r in rows["MRHIER"]} <= auis
    assert {a for r in rows["MRHIER"] for a in r[6].split(".")} <= auis
    generate_meta(tmp_path / "b", 0.001)
    for name in FILES:  # from the seed alone
        assert (tmp_path / "a" / f"{name}.RRF").read_bytes() == (
            tmp_path / "b" / f"{name}.RRF"
        ).read_bytes()


def test_the_relations_floor_reads_what_the_command_answers(tmp_path: Path) -> None:
    """The bare loop timed beside ``umls relations`` builds the same relations (its reads are
    the command's, not fewer): every field but the links, for every concept of a small META."""
    generate_meta(tmp_path / "META", 0.001)
    mrrel = (tmp_path / "META" / "MRREL.RRF").read_text(encoding="utf-8").splitlines()
    cuis = [*sorted({line.split("|")[4] for line in mrrel})[:40], "C9999999"]
    (tmp_path / "inputs.txt").write_text("\n".join(cuis) + "\n", encoding="utf-8")
    args = ["relations", "--meta", tmp_path / "META", "--index-dir", tmp_path / "index",
            "--file", tmp_path / "inputs.txt", "--json"]  # fmt: skip
    result = CliRunner().invoke(umls_app, [str(a) for a in args])
    assert result.exit_code == 1, result.output  # (C9999999: not found)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["input"] for a in answers] == cuis

    db = connect(tmp_path / "index")
    fields = ("ui", "relationLabel", "additionalRelationLabel", "rootSource", "sourceUi",
              "groupId", "obsolete", "suppressible", "sourceOriginated", "attributeCount",
              "relatedIdName", "relatedFromIdName")  # fmt: skip
    compared = 0
    for cui, answer in zip(cuis, answers, strict=True):
        found = relations(db, cui)
        if found is None:
            assert (cui, answer["outcome"]) == ("C9999999", "not_found")
            continue
        mine, cut = found
        theirs = answer["results"]
        assert cut is bool(answer.get("truncated"))
        assert [[r[f] for f in fields] for r in mine] == [[r[f] for f in fields] for r in theirs]
        compared += len(mine)
    assert compared > 100
