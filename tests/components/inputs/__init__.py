"""Tests of components/inputs/."""
