"""Where the lock primitives lived before `meta_evaluator.locks`: kept so old imports still work.

Import from `meta_evaluator.locks`; this module only re-exports it.
"""

from meta_evaluator.locks import (
    LOCK_FILE,
    ProjectLock,
    create_lock_file,
    owner_alive,
    read_lock_owner,
    remove_lock_file,
)

__all__ = [
    "LOCK_FILE",
    "ProjectLock",
    "create_lock_file",
    "owner_alive",
    "read_lock_owner",
    "remove_lock_file",
]
