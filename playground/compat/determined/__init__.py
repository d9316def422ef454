"""Determined's API on playground (see playground/determined/). Placeholder until the top-level package lands."""
