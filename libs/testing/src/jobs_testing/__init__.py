"""Test fixtures shared by every suite (registered as a pytest plugin)."""
