"""Tests of playground/data/ (image LMDBs)."""
