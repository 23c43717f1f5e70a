"""The distribution's version, in one place (``jobs_client.__version__``, the User-Agent)."""

__version__ = "0.1.0"
