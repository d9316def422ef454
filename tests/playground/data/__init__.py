"""Tests of playground/data/ (the batch stream, forms, image LMDBs)."""
