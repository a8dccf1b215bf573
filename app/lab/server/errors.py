"""Errors the server layer raises, as codes and values like app/lab/problems.py: the words (what
went wrong and what to do, in the user's language) are app/text/problems.py's SERVER_PROBLEMS.

A ServerError is not a LabError: it is no input the learner must change, so `except LabError`
around a learner's settings does not swallow a server that died. Both carry `.problems`, which
app.text.problems.error renders."""
from __future__ import annotations

from app.lab.errors import BatchingLabError
from app.lab.problems import CarriesProblems, Problem


class ServerError(CarriesProblems, BatchingLabError, RuntimeError):
    """Base class; .problems[0] (and .code/.values) say what happened."""

    def __init__(self, code: str, /, **values: object):  # positional: a value may be named "code"
        self.problems = [Problem(code, values)]
        super().__init__(str(self.problems[0]))


class InstallationError(ServerError):
    """The embedded server cannot be assembled from the installed packages."""


class StartupError(ServerError):
    """tritonserver did not become ready; the values carry the tail of its log."""


class UnreachableError(ServerError):
    """An external server (TRITON_URL) does not answer."""


class AddressError(ServerError):
    """A server address (a variable's or a flag's) that is no host:port or http://host:port (app/lab/server/address.py)."""
