"""Tests of playground/data/images/."""
