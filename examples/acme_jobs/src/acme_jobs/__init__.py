"""ACME's job types: an example of a team's own handler package (docs/sdk.md)."""
