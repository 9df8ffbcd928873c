"""Tests of the package's cli part (a package, so that test file names may repeat)."""
