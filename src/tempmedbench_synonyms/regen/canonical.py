"""The bytes SPEC section 4 fixes, and their SHA-256: the only place where the bytes that a hash
depends on are made."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def table_bytes(table: Any) -> bytes:
    """Bytes of ``synonyms/synonym_table_kept_full.json`` (and of ``expected_sha256.json``)."""
    text = json.dumps(table, ensure_ascii=False, sort_keys=True, indent=2, separators=(",", ": "))
    return (text + "\n").encode("utf-8")


def surface_line_bytes(obj: Any) -> bytes:
    """Bytes of one line of ``question_surface/question_surface_synonym.jsonl``."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (text + "\n").encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """SHA-256 of a string's UTF-8 bytes (the per-concept hashes of ``expected_sha256.json``)."""
    return sha256_bytes(text.encode("utf-8"))
