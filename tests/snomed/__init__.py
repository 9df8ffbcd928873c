"""Tests of the package's snomed part (a package, so that test file names may repeat)."""
