"""The type catalog the unit tests check jobs against: the built-in types as a worker
announces them (what the registry holds once one has)."""

from __future__ import annotations

from jobs_common.contracts import utcnow
from jobs_submission.adapters.job_types import type_document
from jobs_submission.domain.job_types import AnnouncedType, TypeCatalog
from jobs_testing.builtin_types import builtin_types


def builtin_catalog() -> TypeCatalog:
    return TypeCatalog(
        {
            info.job_type: AnnouncedType.of({"_id": info.job_type, **type_document(info, utcnow())})
            for info in builtin_types()
        }
    )


BUILTINS = builtin_catalog()
