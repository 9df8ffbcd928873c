"""uts.options: the network options checked once, and the cached client and source they build."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import responses

from helpers.uts import BASE
from tempmedbench_synonyms.constants import MAX_WORKERS
from tempmedbench_synonyms.errors import BadInputError
from tempmedbench_synonyms.options import RegenOptions
from tempmedbench_synonyms.testing import CANARY_KEY, find_secret
from tempmedbench_synonyms.uts.cache import LAYOUT
from tempmedbench_synonyms.uts.options import UtsOptions, check_workers
from tempmedbench_synonyms.uts.session import open_uts, rest_source
from tempmedbench_synonyms.uts.source import RestAtomSource


def build(tmp_path: Path, **kw: Any) -> RestAtomSource:
    args: dict[str, Any] = {"base_url": BASE, "cache_dir": tmp_path, "rate": 15.0, "workers": 8}
    args.update(kw)
    return rest_source(UtsOptions(**args), progress=io.StringIO())


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"rate": 21}, "above 20 requests a second"),
        ({"rate": 0}, "at least 0.1"),
        ({"rate": -5}, "at least 0.1"),
        ({"workers": 0}, "--workers 0 is out of range: it must be at least 1"),
        ({"offline": True, "refresh": True}, "^--offline and --refresh contradict each other"),
        ({"base_url": "http://[::1/rest"}, "is not a UTS REST root: it cannot be parsed"),
    ],
)
def test_factory_refuses_bad_options(tmp_path: Path, kw: dict[str, Any], message: str) -> None:
    with pytest.raises(BadInputError, match=message) as info:
        build(tmp_path, **kw)
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("kw", "message", "hint"),
    [
        (
            {"rate": 25},
            "--rate 25 is out of range: it is above 20 requests a second, the most the "
            "UMLS Terminology Services terms of use allow from one IP address",
            "use --rate 20 or less (the default, 15, leaves room for other UTS clients)",
        ),
        (
            {"rate": 0},
            "--rate 0 is out of range: it must be at least 0.1 requests a second (one every 10 s)",
            "give a number from 0.1 to 20; the default is 15",
        ),
        (
            {"workers": 0},
            "--workers 0 is out of range: it must be at least 1",
            "the default is 8 concurrent requests; more than 64 only queue behind the rate limiter",
        ),
        (
            {"workers": -3, "offline": True},
            "--workers -3 is out of range: it must be at least 1",
            "the default is 8 concurrent requests; more than 64 only queue behind the rate limiter",
        ),
    ],
)
def test_factory_checks_rate_and_workers_with_a_hint(
    tmp_path: Path, kw: dict[str, Any], message: str, hint: str
) -> None:
    """The CLI leaves these checks to the factory (they mean nothing to --mrconso)."""
    with pytest.raises(BadInputError) as info:
        build(tmp_path, **kw)
    assert (str(info.value), info.value.hint, info.value.exit_code) == (message, hint, 2)
    assert not (tmp_path / LAYOUT).exists()  # refused before the cache was touched


def test_the_factory_shares_one_cancel_event(tmp_path: Path) -> None:
    src = build(tmp_path)
    client = src.uts.client
    assert client is not None
    client.cancel()
    assert client.limiter.cancel_event.is_set()


def test_factory_wires_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UMLS_API_KEY", CANARY_KEY)
    src = build(tmp_path, rate=20, workers=3)
    assert src.workers == 3
    assert src.uts.client is not None and src.uts.client.limiter.rate == 20.0
    assert src.uts.client.has_key
    assert src.uts.cache is not None and src.uts.cache.root == tmp_path
    options = UtsOptions(base_url=BASE, cache_dir=tmp_path)
    cli_source = RegenOptions(tmp_path, uts=options, progress=sys.stderr).source()
    assert isinstance(cli_source, RestAtomSource) and cli_source.progress_stream is sys.stderr
    quiet = RegenOptions(tmp_path, uts=options).source()
    assert isinstance(quiet, RestAtomSource) and quiet.progress_stream is None
    offline = build(tmp_path, offline=True)
    assert offline.uts.client is None and offline.uts.offline
    assert find_secret(CANARY_KEY, texts={"repr": repr(src) + repr(src.uts.client)}) == []


def test_factory_reads_the_key_file_before_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UMLS_API_KEY", "from-the-environment")
    key_file = tmp_path / "key"
    key_file.write_text(CANARY_KEY + "\n")
    key_file.chmod(0o600)
    src = build(tmp_path, api_key_file=key_file)
    assert src.uts.client is not None
    with responses.RequestsMock() as rsps:
        rsps.get(f"{BASE}/content/2099AA/CUI/C9000001", json={"result": {"ui": "C9000001"}})
        src.uts.client.get_result("/content/2099AA/CUI/C9000001")
        (call,) = rsps.calls
    assert parse_qs(urlsplit(call.request.url).query)["apiKey"] == [CANARY_KEY]


def test_a_key_file_that_cannot_be_read_says_why_and_never_quotes_it(tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as info:
        build(tmp_path, api_key_file=tmp_path / "no-key")
    assert (
        str(info.value)
        == f"{tmp_path / 'no-key'}: cannot read the API key file: No such file or directory"
    )
    latin1 = tmp_path / "latin1-key"
    latin1.write_bytes(b"\xe9" + CANARY_KEY.encode())  # not UTF-8: the error must not quote it
    latin1.chmod(0o600)
    with pytest.raises(BadInputError) as info:
        build(tmp_path, api_key_file=latin1)
    assert str(info.value) == f"{latin1}: cannot read the API key file: it is not UTF-8 text"
    assert info.value.hint == "give a file that holds only your UMLS API key"


def test_factory_cache_dir_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPMEDBENCH_CACHE_DIR", str(tmp_path / "env-cache"))
    src = build(tmp_path, cache_dir=None)
    assert src.uts.cache is not None and src.uts.cache.root == tmp_path / "env-cache"


def test_workers_above_the_limit_run_as_many_as_the_limit() -> None:
    """The one check of --workers: at least 1, and more than MAX_WORKERS run as MAX_WORKERS."""
    assert [check_workers(n) for n in (1, 8, MAX_WORKERS, MAX_WORKERS + 1, 1000)] == [
        1, 8, 64, 64, 64,
    ]  # fmt: skip


def test_many_workers_size_the_pool_and_the_connection_pool_alike(tmp_path: Path) -> None:
    src = build(tmp_path, workers=500)
    assert src.workers == MAX_WORKERS
    assert src.uts.client is not None and src.uts.client._pool_size == MAX_WORKERS
    umls = open_uts(UtsOptions(base_url=BASE, cache_dir=tmp_path, workers=1))
    assert umls.client is not None and umls.client._pool_size == 1
