"""Regenerate and verify the TempMedBench synonym surface from your own UMLS licence."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
