"""Tests of the package's mrconso part (a package, so that test file names may repeat)."""
