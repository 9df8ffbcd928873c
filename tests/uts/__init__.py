"""Tests of the package's uts part (a package, so that test file names may repeat)."""
