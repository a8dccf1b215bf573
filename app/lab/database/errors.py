"""What can go wrong with the class database, as codes and values (words: app/text/problems.py's
DATABASE_PROBLEMS). A DatabaseError is neither a LabError (the learner changed nothing wrong) nor
a ServerError (Triton is fine): pages catch it around the class store alone, so lessons, the lab
and the checker keep working while the database is away."""
from __future__ import annotations

import re

import sqlalchemy.exc

from app.lab.errors import BatchingLabError
from app.lab.problems import CarriesProblems, Problem


class DatabaseError(CarriesProblems, BatchingLabError, RuntimeError):
    def __init__(self, code: str, /, **values: object):
        self.problems = [Problem(code, values)]
        super().__init__(str(self.problems[0]))


def masked(url: str) -> str:
    """The URL with its password replaced, safe to show and log."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


_LOGIN = ("password authentication failed", "authentication failed", "no pg_hba.conf entry", "role ")
_MISSING_DB = ("does not exist",)


def from_exception(err: BaseException, url: str) -> DatabaseError:
    """The one place a driver's exception becomes a code: login refused, database missing,
    unreachable (refused, timed out, restarting) or, failing those, its class name."""
    if isinstance(err, DatabaseError):
        return err
    shown = masked(url)
    text = str(getattr(err, "orig", None) or err).lower()
    if isinstance(err, sqlalchemy.exc.NoSuchModuleError | ModuleNotFoundError):  # an ArgumentError too: first
        return DatabaseError("database_driver_missing", url=shown)
    if isinstance(err, sqlalchemy.exc.ArgumentError):
        return DatabaseError("database_url_invalid", url=shown)
    if isinstance(err, sqlalchemy.exc.OperationalError | sqlalchemy.exc.InterfaceError | ConnectionError | OSError):
        if any(mark in text for mark in _LOGIN):
            return DatabaseError("database_login_refused", url=shown)
        if "database" in text and any(mark in text for mark in _MISSING_DB):
            return DatabaseError("database_missing", url=shown)
        return DatabaseError("database_unreachable", url=shown)
    if isinstance(err, sqlalchemy.exc.DBAPIError) and err.connection_invalidated:
        return DatabaseError("database_unreachable", url=shown)
    return DatabaseError("database_failed", url=shown, kind=type(err).__name__)
