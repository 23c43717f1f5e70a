"""The scheduler's use cases: each loads rows, asks ``domain/`` what to do, hands the moves to
the status writer and the side rows to ``Changes``, in one transaction (``unit_of_work``)."""
