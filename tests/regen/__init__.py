"""Tests of the package's regen part (a package, so that test file names may repeat)."""
