"""Benchmark the fake UTS's own cost per request (``FakeUts.handle``, no socket), so that a
benchmark of a client against the fake measures the client: a search, a crosswalk and an atoms
page over invented rows of two sizes (``testing.invented_rows``, each concept in two sources).

For each size it prints the rows, the time to build the fake's data (its rows in the engine's
index, in memory), and the mean time of a request of each kind over --repeat requests, with the
core count.
Run from the repository root:

    .venv/bin/python bench/bench_fake.py
"""

from __future__ import annotations

import argparse
import os
import time

from tempmedbench_synonyms.testing import CANARY_KEY, FakeUts, FakeUtsData, invented_rows


def two_source_data(concepts: int) -> FakeUtsData:
    """Invented concepts ``0 .. concepts-1``, each in SNOMEDCT_US and MSH under the same code
    ``1000000 + k`` (a crosswalk of one finds the other) and in MTH (``testing.invented_rows``)."""
    both = [*invented_rows(concepts), *invented_rows(concepts, sab="MSH", first_aui=1)]
    return FakeUtsData.from_lines(both)


def mean_ms(fake: FakeUts, requests: list[tuple[str, dict[str, str]]]) -> float:
    start = time.perf_counter()
    for path, params in requests:
        query = {key: [value] for key, value in {**params, "apiKey": CANARY_KEY}.items()}
        assert fake.handle(path, query, base_url="http://127.0.0.1/rest").status == 200
    return (time.perf_counter() - start) / len(requests) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}")
    for concepts in (1_000, 10_000):
        start = time.perf_counter()
        data = two_source_data(concepts)
        index = (time.perf_counter() - start) * 1000
        fake = FakeUts(data, api_key=CANARY_KEY)
        ks = range(args.repeat)
        names = [data.rows[k * 5 % concepts * 5].name for k in ks]  # concepts' PTs
        kinds = {
            "search (a PT, words)": [("/search/2099AA", {"string": n}) for n in names],
            "search exact": [("/search/2099AA", {"string": n, "searchType": "exact"})
                             for n in names],
            "crosswalk": [(f"/crosswalk/2099AA/source/SNOMEDCT_US/{1_000_000 + k % concepts}", {})
                          for k in ks],
            "atoms of a CUI": [(f"/content/2099AA/CUI/C{9_000_001 + k % concepts}/atoms", {})
                               for k in ks],
        }  # fmt: skip
        print(f"{len(data.rows):,} rows: data built in {index:.0f} ms")
        for label, requests in kinds.items():
            print(f"  {label:22} {mean_ms(fake, requests):7.2f} ms a request")


if __name__ == "__main__":
    main()
