"""Shared pieces of the job platform that cross service boundaries."""
