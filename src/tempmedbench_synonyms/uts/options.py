"""The network options, defined once (``UtsOptions``), and their checks, made when a client is
built, not when parsed (docs/architecture.md, "Options are built once").
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import logging
import math
import os
import typing
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import unquote, urlsplit

import idna

from tempmedbench_synonyms import config
from tempmedbench_synonyms.config import option
from tempmedbench_synonyms.constants import (
    API_KEY_ENV,
    BASE_URL_ENV,
    CACHE_DIR_ENV,
    DEFAULT_BASE_URL,
    DEFAULT_RATE,
    DEFAULT_TIMEOUT,
    DEFAULT_WORKERS,
    INDEX_DIR_ENV,
    MAX_RATE,
    MAX_WORKERS,
    MIN_RATE,
    RETRY_BUDGET,
)
from tempmedbench_synonyms.errors import BadInputError, TempMedBenchError
from tempmedbench_synonyms.secret import holds_secret, read_api_key, redact, redact_url

StrPath = str | os.PathLike[str]
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UtsOptions:
    base_url: str | None = option(
        None, "--base-url", "UTS REST root.", f"{BASE_URL_ENV}, else {DEFAULT_BASE_URL}"
    )
    cache_dir: Path | None = option(
        None,
        "--cache-dir",
        "Cache folder.",
        f"{CACHE_DIR_ENV}, else the user cache folder of tempmedbench-synonyms",
    )
    offline: bool = option(False, "--offline", "Never touch the network: answer from the cache.")
    refresh: bool = option(False, "--refresh", "Ignore cached answers and ask UMLS again.")
    rate: float = option(
        DEFAULT_RATE,
        "--rate",
        f"Requests a second, shared by all workers and every run of this machine: from "
        f"{MIN_RATE:g} to {MAX_RATE:g} (the UTS limit per IP).",
    )
    workers: int = option(DEFAULT_WORKERS, "--workers", "Concurrent UTS requests.")
    timeout: float = option(
        DEFAULT_TIMEOUT,
        "--timeout",
        "The most seconds one HTTP attempt may take, from connect to last byte (the DNS "
        "lookup of the host name is not counted).",
    )
    api_key_file: Path | None = option(
        None,
        "--api-key-file",
        "A file holding your UMLS API key (default: the file UMLS_API_KEY_FILE names, else "
        "the UMLS_API_KEY variable).",
        "",
    )

    @classmethod
    def of(cls, **keywords: Any) -> UtsOptions:
        """The options of the API's keywords; ``TypeError`` for a wrong type or an unknown name."""
        values: dict[str, Any] = {}
        kinds = typing.get_type_hints(cls)
        for name, value in keywords.items():
            if name not in kinds:
                raise TypeError(f"unexpected keyword argument {name!r}")
            values[name] = _typed(name, kinds[name], value)
        return cls(**values)

    @property
    def url(self) -> str:
        return config.base_url(self.base_url)

    @property
    def cache_folder(self) -> Path:
        return config.resolve_cache_dir(self.cache_dir)

    def check(self) -> int:
        """BadInputError naming the option out of range or contradicted; else the workers to run."""
        try:
            check_base_url(self.url)
        except BadInputError:
            # Read the key before saying so, so that the message masks a key pasted as the
            # URL's host or port (a user name, query and fragment are masked in any case).
            with contextlib.suppress(TempMedBenchError):
                read_api_key(self.api_key_file)
            check_base_url(self.url)
            raise
        check_rate(self.rate)
        workers = check_workers(self.workers)
        check_timeout(self.timeout)
        if self.offline and self.refresh:
            raise BadInputError(
                "--offline and --refresh contradict each other: --refresh fetches again, "
                "--offline never fetches",
                key="--offline",
                hint="drop one of them",
            )
        return workers

    def say_ignored(self, by: str, *, used: tuple[str, ...] = ()) -> None:
        """Warn once which options given a local run (``by``: its flag) ignores, but ``used``: the
        flags given non-default values (the ones read from the environment are not)."""
        ignored = [
            f.metadata["cli"].flag
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != f.default and f.metadata["cli"].flag not in used
        ]
        if ignored:
            log.warning("%s only appl%s to the UMLS REST API: ignored with %s",
                        ", ".join(ignored), "ies" if len(ignored) == 1 else "y", by)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Local:
    """Where a ``umls`` command answers from instead of UTS: local UMLS files (SPEC 12)."""

    meta: Path | None = option(
        None,
        "--meta",
        "Answer from your own UMLS files instead of UTS, with no key and no network: a META "
        "folder, or the Metathesaurus or full release zip (MRCONSO.RRF, and whichever of "
        "MRDEF, MRREL, MRSTY, MRHIER and MRSAB it holds); indexed on first need.",
        "",
    )
    mrconso: Path | None = option(
        None,
        "--mrconso",
        "Answer from one MRCONSO.RRF (any form NLM ships), a META of it alone: as --meta, "
        "but definitions, relations, hierarchy and semantic types are bad input.",
        "",
    )
    index_dir: Path | None = option(
        None,
        "--index-dir",
        "Where the index of --meta's files is kept (a few times the files' size; built once, "
        "found again by the files' identity).",
        f"{INDEX_DIR_ENV}, else the folder index in the cache folder",
    )


class UtsKeywords(TypedDict, total=False):
    """``UtsOptions`` as the Python API's keywords (``Unpack[UtsKeywords]``)."""

    base_url: str | None
    cache_dir: StrPath | None
    offline: bool
    refresh: bool
    rate: float
    workers: int
    timeout: float
    api_key_file: StrPath | None


def _typed(name: str, kind: Any, value: Any) -> Any:
    """``value`` as the field ``name`` of type ``kind`` holds it, or ``TypeError`` naming it."""
    kinds = typing.get_args(kind) or (kind,)
    if value is None and type(None) in kinds:
        return None
    if Path in kinds and isinstance(value, (str, os.PathLike)):
        return Path(value)
    if bool in kinds and type(value) is bool:
        return value
    if int in kinds and type(value) is int:
        return value
    if float in kinds and type(value) in (int, float):
        return float(value)
    if str in kinds and type(value) is str:
        return value
    wanted = (
        "a path (str or os.PathLike)" if Path in kinds
        else {bool: "True or False", int: "a whole number", float: "a number"}.get(
            kinds[0], "a string"
        )
    )  # fmt: skip
    raise TypeError(f"{name} must be {wanted}, not {type(value).__name__}")


def check_workers(workers: int) -> int:
    """The workers to run for ``--workers``: BadInputError below 1, at most ``MAX_WORKERS``."""
    if workers < 1:
        raise BadInputError(
            f"--workers {workers} is out of range: it must be at least 1",
            key="--workers",
            hint=f"the default is {DEFAULT_WORKERS} concurrent requests; more than "
            f"{MAX_WORKERS} only queue behind the rate limiter",
        )
    return min(workers, MAX_WORKERS)


def check_base_url(url: str) -> str:
    """``url`` if it can be a UTS REST root, else BadInputError naming ``--base-url``: ``https``
    with a host, no query, fragment or user name; plain ``http`` only to this machine (else the
    key goes in clear); no key read so far (it would reach DNS and a file name)."""
    problem = None
    hint = (
        f"the default is {DEFAULT_BASE_URL}; plain http is allowed only to this machine "
        "(127.0.0.1), for a test server"
    )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as err:
        problem = f"it cannot be parsed ({redact(str(err))})"
    else:
        host = parts.hostname or ""
        if parts.scheme not in ("https", "http"):
            problem = "it must start with https://"
        elif not host:
            problem = "it has no host"
        elif parts.query or parts.fragment or parts.username is not None:
            problem = "it must not hold a query, a fragment or a user name"
        elif parts.scheme == "http" and not is_loopback(host):
            problem = "plain http would send the API key in clear; use https://"
        elif url_holds_secret(url):
            problem = "it holds the API key"
            hint = (
                f"the key belongs in {API_KEY_ENV} or a key file (--api-key-file), never in "
                f"the URL; the default is {DEFAULT_BASE_URL}"
            )
    if problem is None:
        return url
    raise BadInputError(
        f"--base-url {_shown_url(url)!r} is not a UTS REST root: {problem}",
        key="--base-url",
        hint=hint,
    )


#: How many times a base URL is percent-decoded at most, looking for a key (``%252d``...).
_MAX_DECODINGS = 8


def url_holds_secret(url: str) -> bool:
    """Whether ``url`` holds a key read so far as given or as a resolver would see it
    (percent-decoded to a fixed point, NFKC, case-folded, its host IDNA-encoded as urllib3 does)."""
    return holds_secret(*_url_forms(url))


def _url_forms(url: str) -> set[str]:
    forms = {url}
    for _ in range(_MAX_DECODINGS):
        decoded = unquote(url)
        if decoded == url:
            break
        forms.add(decoded)
        url = decoded
    for form in list(forms):
        forms.add(unicodedata.normalize("NFKC", form).casefold())
        try:
            host = urlsplit(form).hostname or ""
        except ValueError:
            continue
        with contextlib.suppress(idna.IDNAError, UnicodeError, ValueError):
            forms.add(idna.encode(host, uts46=True).decode("ascii"))
        with contextlib.suppress(UnicodeError, ValueError):
            forms.add(host.encode("idna").decode("ascii"))
    return forms


def _shown_url(url: str) -> str:
    """``url`` masked (``redact_url``), host and path ``***`` if they still hold a key."""
    shown = redact_url(url)
    if not url_holds_secret(shown):
        return shown
    try:
        parts = urlsplit(url)
    except ValueError:
        return "***"
    path = "/***" if url_holds_secret(parts.path) else redact(parts.path)
    return f"{parts.scheme}://***{path}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine (``localhost``, 127.0.0.0/8, ::1): http ok, no proxy."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: The longest ``--timeout``: the whole retry budget of one request (``RetryPolicy.max_total``).
MAX_TIMEOUT = RETRY_BUDGET
_RATE_RANGE = f"give a number from {MIN_RATE:g} to {MAX_RATE:g}; the default is {DEFAULT_RATE:g}"


def check_rate(rate: float) -> float:
    """Return ``rate`` as a float, or raise BadInputError if it is not in [0.1, 20]."""
    try:
        value = float(rate)
    except (TypeError, ValueError):
        raise BadInputError(
            f"--rate {rate!r} is not a number of requests a second",
            key="--rate",
            hint=_RATE_RANGE,
        ) from None
    if not value >= MIN_RATE:  # also rejects NaN
        raise BadInputError(
            f"--rate {value:g} is out of range: it must be at least {MIN_RATE:g} requests a "
            f"second (one every {1 / MIN_RATE:g} s)",
            key="--rate",
            hint=_RATE_RANGE,
        )
    if value > MAX_RATE:
        raise BadInputError(
            f"--rate {value:g} is out of range: it is above {MAX_RATE:g} requests a second, the "
            "most the UMLS Terminology Services terms of use allow from one IP address",
            key="--rate",
            hint=f"use --rate {MAX_RATE:g} or less (the default, {DEFAULT_RATE:g}, leaves room "
            "for other UTS clients)",
        )
    return value


def check_timeout(seconds: float) -> float:
    """``seconds`` if it is a usable ``--timeout``, else BadInputError naming the option."""
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT):
        raise BadInputError(
            f"--timeout {seconds:g} is out of range: it must be more than 0 and at most "
            f"{MAX_TIMEOUT:g} seconds (one request's whole retry budget)",
            key="--timeout",
            hint=f"the default is {DEFAULT_TIMEOUT:g} seconds for one attempt, from connect to "
            "last byte",
        )
    return seconds
