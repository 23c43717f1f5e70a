"""The ``jobs`` command-line tool (console script ``jobs``, :func:`main.main`)."""
