"""The jobs list's search as SQL over its indexes (``domain/search.py`` parses it).

An id prefix is a range of the primary key. A payload match is a containment test on
``payload``, which ``ix_jobs_payload`` indexes (GIN, ``jsonb_path_ops``; scheduler migration
0026): ``payload @> '{"field": value}'`` holds when the top-level ``field`` equals ``value``
(a nested one never matches: containment follows the structure). Each reading of the value
is one containment, OR-ed (a bitmap OR of index scans).
"""

from __future__ import annotations

from sqlalchemy import and_, or_
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.jobstore import jobs
from jobs_dashboard.domain.id_prefix import IdPrefix
from jobs_dashboard.domain.search import JobSearch


def search_condition(search: JobSearch) -> ColumnElement[bool]:
    if isinstance(search, IdPrefix):
        return and_(jobs.c.id >= search.lowest, jobs.c.id <= search.highest)
    return or_(*(jobs.c.payload.contains(document) for document in search.documents()))
