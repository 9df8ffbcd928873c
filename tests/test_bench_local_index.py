"""The invented META of bench/bench_local_index.py has the layout the index reads (a small one)."""

from __future__ import annotations

import sys
from pathlib import Path

from tempmedbench_synonyms.mrconso.engine import COLUMNS

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
from bench_local_index import FILES, generate_meta


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
