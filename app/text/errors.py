"""The one translator from whatever stops a page or a command to the learner's words: what
happened and, where it helps, what to do next. Pages (app/views), widgets (app/ui) and the CLI
(app/cli.py) catch `EXPLAINED` and show `explain(err, _)`; nothing else turns an exception into words.

What it explains:
- the lab's own errors, which carry Problem codes (`LabError` and its subclasses such as
  DeploymentError, `ServerError`, the class store's `DatabaseError`): each problem worded from
  app/text/problems.py, or from the caller's own wording of a code (the check page's);
- Triton refusing a request (`InferenceServerException`): Triton's own message, quoted as it is;
  gRPC's UNAVAILABLE is a server that does not answer, as the HTTP client's refused socket is;
- the socket to a server failing before Triton said anything (`ConnectionError`, `TimeoutError`,
  a name that does not resolve), with the caller's server address when it has one;
- any other `OSError` (a file that cannot be read or written, a process that cannot start): the
  system's reason, quoted;
- a `ValueError` that carries no problems: the engine words every check of its own input as a
  LabError, so what is left is a value from outside that a library or the host's environment
  refused (a TRITON_LAB_* setting that is not a number), or a content or quiz-bank file the app
  refused (ContentError, BankError, ...: lab exceptions that are ValueErrors): its text, quoted.

What it does not: any other exception (TypeError, KeyError, AttributeError, AssertionError, ...) is
a bug in the app, not something the learner did or can fix. `explain` raises it again, so that
Streamlit shows its traceback and the CLI exits 1 with one: a polite sentence would hide where it
broke from whoever must fix it, and tell the learner nothing they can act on.
"""
from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass

from tritonclient.utils import InferenceServerException

from app.i18n import N_, Words
from app.lab.database import DatabaseError
from app.lab.errors import BatchingLabError
from app.lab.problems import LabError, Problem
from app.lab.server import ServerError
from app.text.problems import PROBLEMS

# What a caller catches around work that may fail for a reason the learner should read: the lab's
# own exceptions by their root (app/lab/errors.py draws the tree), Triton's refusals, and what
# libraries and the host raise (OSError, ValueError). explain words every one of them that carries
# problems or is a ValueError; a lab exception that is neither (a poll or attempt that is gone or
# closed, which the quiz pages catch by name where they happen) is raised again, as a bug.
EXPLAINED: tuple[type[Exception], ...] = (BatchingLabError, InferenceServerException, OSError, ValueError)

# The sockets' failures: no answer came, so the server (or the address) is the matter, not a request.
_NO_ANSWER: tuple[type[OSError], ...] = (ConnectionError, TimeoutError, socket.gaierror, socket.herror)
# tritonclient.grpc's status for a channel that cannot connect (str(grpc.StatusCode.UNAVAILABLE)).
_GRPC_UNAVAILABLE = "StatusCode.UNAVAILABLE"

# Codes of what is not a lab Problem, worded here (the lab's problems are in app/text/problems.py).
TRITON_REFUSED = "triton_refused_request"
SERVER_SILENT = "server_silent"  # no answer, and the caller knows no address (with one: "server_unreachable")
PATH_UNUSABLE = "path_unusable"
SYSTEM_REFUSED = "system_refused"
VALUE_UNUSABLE = "value_unusable"

MESSAGES = {
    TRITON_REFUSED: N_("Triton refused the request: `{message:text}`"),
    SERVER_SILENT: N_("the server did not answer ({kind:text}: `{error:text}`)"),
    PATH_UNUSABLE: N_("{path:text} cannot be used ({kind:text}): `{error:text}`"),
    SYSTEM_REFUSED: N_("the system refused an operation ({kind:text}): `{error:text}`"),
    VALUE_UNUSABLE: N_("a value cannot be used: `{error:text}`"),
}

# The next step, by code, where the message does not already say one (most problems' words do).
NEXT_STEPS = {
    SERVER_SILENT: N_("Check that the server is running and that its address is right."),
    "database_unreachable": N_("If it stays away, check the class database's address: TRITON_LAB_DATABASE_URL, or `url` "
                               "under [connections.class_store] in .streamlit/secrets.toml."),
}


@dataclass(frozen=True)
class Explanation:
    """What the learner reads: `message` (a clause, like a problem's words, so a page may put it
    after its own "could not ...:"), and `next_step` (a sentence) or None. `codes` name what
    happened, in the message's order (for tests and logs, not words)."""

    codes: tuple[str, ...]
    message: str
    next_step: str | None = None

    def __str__(self) -> str:
        return f"{self.message} {self.next_step}" if self.next_step else self.message


def problems_of(err: BaseException, url: str | None = None) -> list[Problem]:
    """The codes and values of an explained exception (see the module's docstring); any other
    exception is raised again."""
    if isinstance(err, LabError | ServerError | DatabaseError):
        return list(err.problems)
    if isinstance(err, InferenceServerException):
        if err.status() == _GRPC_UNAVAILABLE:
            return [_no_answer(err, url)]
        return [Problem(TRITON_REFUSED, {"message": err.message() or str(err)})]
    if isinstance(err, _NO_ANSWER):
        return [_no_answer(err, url)]
    if isinstance(err, OSError):
        kind, reason = type(err).__name__, err.strerror or str(err)
        if err.filename is not None:
            return [Problem(PATH_UNUSABLE, {"path": str(err.filename), "kind": kind, "error": reason})]
        return [Problem(SYSTEM_REFUSED, {"kind": kind, "error": reason})]
    if isinstance(err, ValueError):
        return [Problem(VALUE_UNUSABLE, {"error": str(err)})]
    raise err  # a bug: see the module's docstring


def _no_answer(err: BaseException, url: str | None) -> Problem:
    kind = type(err).__name__
    if url:  # the server layer's own words for an address that does not answer
        return Problem("server_unreachable", {"url": url, "kind": kind})
    error = err.message() if isinstance(err, InferenceServerException) else str(err)
    return Problem(SERVER_SILENT, {"kind": kind, "error": error or kind})


def explain(err: BaseException, _: Words, *, url: str | None = None, wording: Mapping[str, str] | None = None,
            next_steps: Mapping[str, str] | None = None) -> Explanation:
    """`err` in _'s language. `url`: the server the caller was talking to, named when it does not
    answer. `wording` and `next_steps`: the caller's own templates (msgids) by code, which win over
    the shared ones, for a page that says what can be done on it. Several problems are joined; the
    next step is that of the first problem that has one. Raises `err` again when it is not one of
    EXPLAINED (a bug)."""
    problems = problems_of(err, url)
    templates = {**PROBLEMS, **MESSAGES, **(wording or {})}
    steps = {**NEXT_STEPS, **(next_steps or {})}
    message = _("; ").join(_render(_, templates, p.code, p.values) for p in problems)
    stepped = next((p for p in problems if p.code in steps), None)
    step = _.render(steps[stepped.code], **stepped.values) if stepped else None
    return Explanation(tuple(p.code for p in problems), message, step)


def _render(_: Words, templates: Mapping[str, str], code: str, values: Mapping[str, object]) -> str:
    template = templates.get(code)
    if template is None:
        raise KeyError(f"no words for problem {code!r}: add them to app/text/problems.py")
    return _.render(template, **values)
