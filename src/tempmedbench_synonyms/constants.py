"""Every environment variable name and app-wide constant, written once (a leaf: it imports nothing).

The variables are read in one place only, ``config`` (see docs/architecture.md); the defaults and
limits of the network options are here so that ``--help`` and the API can show them without
importing the UTS client.
"""

from __future__ import annotations

#: The package's version (the build reads it here: pyproject.toml's ``[tool.hatch.version]``);
#: the package face re-exports it, and the modules import it from here, never from the face.
__version__ = "0.1.0"

#: The name of the app: its folders (platformdirs), its User-Agent, its messages.
APP_NAME = "tempmedbench-synonyms"

# -- environment variables, read by ``config`` only (docs/reference.md, "Environment variables")

API_KEY_ENV = "UMLS_API_KEY"
API_KEY_FILE_ENV = "UMLS_API_KEY_FILE"
BASE_URL_ENV = "UMLS_BASE_URL"
CACHE_DIR_ENV = "TEMPMEDBENCH_CACHE_DIR"
INDEX_DIR_ENV = "TEMPMEDBENCH_INDEX_DIR"
#: Where the rate state shared by every run of the machine lives (instead of platformdirs').
STATE_DIR_ENV = "TEMPMEDBENCH_STATE_DIR"
#: The log level when neither ``-q`` nor ``-v`` is given (as pip-audit's PIP_AUDIT_LOGLEVEL).
LOG_LEVEL_ENV = "TEMPMEDBENCH_LOG_LEVEL"
GPS_ENV = "TEMPMEDBENCH_GPS"
#: https://no-color.org: set to anything, no colour at all.
NO_COLOR_ENV = "NO_COLOR"
#: The user's home folder, where platformdirs puts the default cache and state folders.
HOME_ENV = "HOME"

#: The families of the tool's variables (every ``*_ENV`` name but NO_COLOR and HOME, and any a
#: later version or a typo adds): a fake UTS's environment holds none of the user's
#: (``config.tool_variables``).
ENV_PREFIXES = ("UMLS_", "TEMPMEDBENCH_")
#: The variables (both spellings) that name the hosts requests reaches without a proxy: a fake
#: UTS's environment adds this machine to them (``config.no_proxy_with_loopback``).
NO_PROXY_VARS = ("NO_PROXY", "no_proxy")
#: This machine's names, which no proxy should ever see a request for.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


DEFAULT_BASE_URL = "https://uts-ws.nlm.nih.gov/rest"
#: Where a user finds their API key.
PROFILE_URL = "https://uts.nlm.nih.gov/uts/profile"

#: UTS terms of service: no more than 20 requests a second per IP address.
MAX_RATE = 20.0
#: The least ``--rate``: one request every 10 s. Below it a run would wait hours between
#: requests without a word (and a rate of 1e-12 overflows the waits).
MIN_RATE = 0.1
#: SPEC section 7: ``--rate`` defaults to 15 requests a second.
DEFAULT_RATE = 15.0
#: SPEC section 7: ``--workers`` defaults to 8 concurrent requests.
DEFAULT_WORKERS = 8
#: More threads than this only queue behind the rate limiter (20 req/s x a slow 3 s answer).
MAX_WORKERS = 64
#: SPEC section 7: ``--timeout`` defaults to 30 s for one attempt, connect to last byte.
DEFAULT_TIMEOUT = 30.0
#: The most seconds one request spends in all its attempts and retry waits (not waits for a turn:
#: SPEC section 8). Two minutes outlast a busy UTS's 5xx spells, and fail a down UTS in minutes.
RETRY_BUDGET = 120.0
