"""Drive umls-python-client over a list of inputs: run by ``bench_peers.py`` with the python of
its own virtualenv (``bench/out/peer-venv``, where umls-python-client is installed; it is never a
dependency of this project, and this file imports nothing of this project).

    peer-venv/bin/python bench/peer_driver.py {bulk|async} {search|crosswalk} BASE_URL IN
                                              [--sab SAB] [--workers N]

The key is read from ``UMLS_API_KEY``. The client is pointed at ``BASE_URL`` with its own
constructor argument ``http_client`` (an ``httpx`` client whose ``base_url`` is the fake's): its
transport sends relative paths (``/search/current``) through that client, so no patch is needed.

* ``bulk``: what its README shows for many inputs (Bulk Workflows):
  ``UMLSClient.search_api.bulk_search(terms)`` and ``crosswalk_api.bulk_crosswalk(codes,
  source=SAB)``, one request after the other. The legacy ``UMLSClient`` is used because it
  returns an error payload per input; the typed client's bulk methods raise on the first 404
  (an unknown code), which ends the whole batch.
* ``async``: the concurrency it offers, ``AsyncUMLSClient``, with ``--workers`` requests in
  flight (an ``asyncio.Semaphore`` and ``asyncio.gather``, as a user who wants speed would write
  it: the client has no concurrent batch, its ``bulk_*`` await one input after the other).

Prints one JSON line per input, in input order: ``{"input", "ids", "error"}``, ``ids`` the sorted
CUIs of a search or ``SAB|code`` of a crosswalk (``[]``: not found), ``None`` with ``error`` when
the input failed (a 429 after its retries, say).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx
from umls_python_client import AsyncUMLSClient, UMLSClient, UMLSError, UMLSHTTPError


def ids_of(task: str, payload: dict[str, Any]) -> tuple[list[str] | None, str | None]:
    """The answer's identifiers, or ``None`` and why (from a payload or a legacy error dict)."""
    if "error" in payload:
        status = payload.get("status_code")
        if status == 404:
            return [], None  # not found: an unknown code
        return None, f"{status or payload['error']}"
    result = payload.get("result", [])
    if task == "search":
        rows = result.get("results", []) if isinstance(result, dict) else []
        return sorted({r["ui"] for r in rows if r.get("ui") not in (None, "NONE")}), None
    rows = result if isinstance(result, list) else []
    return sorted({f"{r['rootSource']}|{r['ui']}" for r in rows}), None


def run_bulk(args: argparse.Namespace, inputs: list[str], key: str) -> list[dict[str, Any]]:
    http = httpx.Client(base_url=args.base_url, timeout=30.0)
    with UMLSClient(api_key=key, http_client=http) as client:
        if args.task == "search":
            got = client.search_api.bulk_search(inputs, return_indented=False)
            payloads = [r["response"] for r in got["result"]]
        else:
            got = client.crosswalk_api.bulk_crosswalk(
                inputs, source=args.sab, return_indented=False
            )
            payloads = [r["response"] for r in got["result"]]
    http.close()
    return [dict(zip(("ids", "error"), ids_of(args.task, p), strict=True)) for p in payloads]


async def run_async(args: argparse.Namespace, inputs: list[str], key: str) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(args.workers)
    http = httpx.AsyncClient(base_url=args.base_url, timeout=30.0)
    async with AsyncUMLSClient(api_key=key, http_client=http) as client:

        async def one(item: str) -> dict[str, Any]:
            async with gate:
                try:
                    if args.task == "search":
                        response = await client.search_api.search(item)
                    else:
                        response = await client.crosswalk_api.get_crosswalk(args.sab, item)
                except UMLSHTTPError as err:
                    if err.status_code == 404:
                        return {"ids": [], "error": None}
                    return {"ids": None, "error": str(err.status_code)}
                except UMLSError as err:
                    return {"ids": None, "error": type(err).__name__}
            ids, error = ids_of(args.task, response.to_dict())
            return {"ids": ids, "error": error}

        answers = await asyncio.gather(*(one(item) for item in inputs))
    await http.aclose()
    return list(answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("bulk", "async"))
    parser.add_argument("task", choices=("search", "crosswalk"))
    parser.add_argument("base_url")
    parser.add_argument("inputs", type=Path)
    parser.add_argument("--sab", default="SNOMEDCT_US")
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    inputs = args.inputs.read_text(encoding="utf-8").splitlines()
    key = os.environ["UMLS_API_KEY"]
    if args.mode == "bulk":
        answers = run_bulk(args, inputs, key)
    else:
        answers = asyncio.run(run_async(args, inputs, key))
    for item, answer in zip(inputs, answers, strict=True):
        print(json.dumps({"input": item, **answer}))


if __name__ == "__main__":
    main()
