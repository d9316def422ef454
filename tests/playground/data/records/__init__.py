"""Tests of playground/data/records/."""
