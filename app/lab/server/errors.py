"""Errors the server layer raises; each message says what went wrong and what to do."""


class ServerError(RuntimeError):
    """Base class: a message fit to show a learner as it is."""


class InstallationError(ServerError):
    """The embedded server cannot be assembled from the installed packages."""


class StartupError(ServerError):
    """tritonserver did not become ready; the message carries the tail of its log."""


class UnreachableError(ServerError):
    """An external server (TRITON_URL) does not answer."""
