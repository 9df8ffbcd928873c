"""The invented META of bench/bench_local_index.py has the layout the index reads (a small one)."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tempmedbench_synonyms.cli.umls import umls_app
from tempmedbench_synonyms.mrconso.engine import COLUMNS

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
import floor_relations
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


@pytest.mark.parametrize("limit", [1000, 5])
def test_the_relations_floor_prints_the_commands_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], limit: int
) -> None:
    """The bare loop timed beside ``umls relations`` answers each input as the command does (its
    reads are the command's, not fewer): the outcome (a concept without relations is
    ``not_found``, as an unknown one: SPEC 11), whether ``--limit`` cut it, and every field but
    the links of each relation, for concepts with and without relations and an unknown one."""
    generate_meta(tmp_path / "META", 0.001)
    mrrel = (tmp_path / "META" / "MRREL.RRF").read_text(encoding="utf-8").splitlines()
    mrconso = (tmp_path / "META" / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines()
    related = sorted({line.split("|")[4] for line in mrrel})
    without = sorted({line.split("|")[0] for line in mrconso} - set(related))[:2]
    cuis = [*related[:40], *without, "C9999999"]
    (tmp_path / "inputs.txt").write_text("\n".join(cuis) + "\n", encoding="utf-8")
    args = ["relations", "--meta", tmp_path / "META", "--index-dir", tmp_path / "index",
            "--file", tmp_path / "inputs.txt", "--json", "--limit", limit]  # fmt: skip
    result = CliRunner().invoke(umls_app, [str(a) for a in args])
    assert result.exit_code == 1, result.output  # (C9999999: not found)
    monkeypatch.setattr(floor_relations, "LIMIT", limit)
    monkeypatch.setattr(sys, "argv", ["floor_relations.py", str(tmp_path / "index"),
                                      str(tmp_path / "inputs.txt")])  # fmt: skip
    capsys.readouterr()
    floor_relations.main()
    fields = ("ui", "relationLabel", "additionalRelationLabel", "rootSource", "sourceUi",
              "groupId", "obsolete", "suppressible", "sourceOriginated", "attributeCount",
              "relatedIdName", "relatedFromIdName")  # fmt: skip

    def said(line: str) -> tuple[object, ...]:
        a = json.loads(line)
        rows = [[r[f] for f in fields] for r in a["results"] or []]
        return a["input"], a["outcome"], bool(a["truncated"]), rows

    theirs = [said(line) for line in result.stdout.splitlines()]
    mine = [said(line) for line in capsys.readouterr().out.splitlines()]
    assert [a[0] for a in theirs] == cuis
    assert mine == theirs
    assert [a[1] for a in mine[40:]] == ["not_found"] * 3
    assert sum(len(a[3]) for a in mine) > 100
    assert sum(a[2] for a in mine) == (0 if limit == 1000 else 19)  # (19 have more than 5)

    # the reads: MRREL's rows, then the atoms, source codes and concepts they name; MRREL's rows
    # alone for a concept without relations (not_found, whether MRCONSO holds it or not)
    statements: list[str] = []
    with closing(floor_relations.connect(tmp_path / "index")) as db:
        db.set_trace_callback(statements.append)
        for cui, reads in ((related[0], 4), (without[0], 1), ("C9999999", 1)):
            statements.clear()
            floor_relations.relations(db, cui)
            assert len(statements) == reads, (cui, statements)


def test_a_floor_that_fails_or_answers_otherwise_is_said_not_timed() -> None:
    """The bench prints a floor's time only when the loop ended well and printed the command's
    answers: a traceback exits 1, which ``best_of`` takes for a run with a not_found."""
    from subprocess import CompletedProcess

    from bench_local_index import floor_problem

    command = '{"input":"C1","outcome":"found","results":[{"ui":"R1","rootSource":"S"}]}\n'
    other = command.replace("R1", "R2")
    crash = "Traceback (most recent call last):\n  ...\nValueError: not enough values\n"
    assert floor_problem(CompletedProcess([], 0, command, ""), command) is None
    assert floor_problem(CompletedProcess([], 1, "", crash), command) == (
        "exit 1: ValueError: not enough values"
    )
    assert floor_problem(CompletedProcess([], 0, other, ""), command) == (
        "1 of 1 inputs answered otherwise than the command (first: line 1)"
    )
    assert floor_problem(CompletedProcess([], 0, "", ""), command) == (
        "0 answers for the command's 1"
    )


def test_a_meta_too_small_for_the_inputs_is_refused_not_picked_forever(tmp_path: Path) -> None:
    """At ``--scale 0.001`` the rows hold fewer distinct words than the 980 known inputs of the
    word searches: the benchmark says so and which scale to change, where it used to loop for
    ever drawing words it already had (run in a child with a deadline, so a loop fails here)."""
    generate_meta(tmp_path / "META", 0.001)
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parents[1] / 'bench')!r}); "
        "from pathlib import Path; from bench_local_index import pick_inputs; "
        f"pick_inputs(Path({str(tmp_path)!r}), Path({str(tmp_path / 'META')!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"bench: {tmp_path / 'META'} gives 541 distinct words to ask, fewer than the 980 inputs "
        "of its command: give a larger --scale\n"
    )
    assert not list(tmp_path.glob("inputs-*.txt"))
