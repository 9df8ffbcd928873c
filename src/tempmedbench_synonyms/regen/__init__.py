"""The pure regeneration: a release folder and an atom source in, two verified files out. It
imports only the kernel: it never knows where its atoms came from (docs/architecture.md)."""

__all__ = [
    "canonical",
    "freeze",
    "manifest",
    "pipeline",
    "release",
    "report",
    "selection",
    "surface",
]
