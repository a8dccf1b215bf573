"""The embedded server's log as evidence: the lines one run caused, parsed and classified.

Triton writes glog-style lines, `W1130 18:04:21.428952 7497 sequence_batch_scheduler.cc:763]
"..."`, whose message is a JSON string (Triton escapes messages unless
TRITON_SERVER_ESCAPE_LOG_MESSAGES=0); tables and unescaped messages run on over the
following lines. A `LogWindow` marks the file's size before a run and reads only what was
written after it. Lines are quoted verbatim (`LogEntry.raw`); the classification gives
codes and values, never prose, so words stay at the page or CLI edge.

Only the embedded server's log is a file we can read: with an external server (TRITON_URL)
a window is unavailable (`Unavailable.EXTERNAL_SERVER`) and reads nothing.

What Triton 2.51 writes at `--log-verbose=0` (seen on the embedded server): model loading,
loaded, unloaded, and the correlation-ID conflict WARNING. The START-flag refusal ("Infer
failed"), the reaper's messages and slot bookkeeping are VERBOSE(1) only
(sequence_batch_scheduler.cc, http_server.cc); `raised_verbosity` turns them on for a run
through the logging extension (`/v2/logging`, tritonclient `update_log_settings`), which
changes the whole server's verbosity while it lasts.
"""
from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from app.lab import database
from app.lab.observation import shared_verbosity

if TYPE_CHECKING:
    import tritonclient.http as http


class Level(str, Enum):
    INFO = "I"
    WARNING = "W"
    ERROR = "E"
    FATAL = "F"


# Triton's words when a request without START names a sequence it does not know: the same in the
# client's error and in the log line (core sequence_batch_scheduler.cc).
START_REFUSAL = "must specify the START flag"


class LogCode(str, Enum):
    """Lines a learner should notice. `MIN_VERBOSITY` says when Triton 2.51 writes each."""

    SEQUENCE_CONFLICT = "sequence_conflict"  # START for an in-flight correlation ID
    START_FLAG_MISSING = "start_flag_missing"  # first request of a sequence lacked START
    INFER_FAILED = "infer_failed"  # any other refused request
    REAPER_IDLE = "reaper_idle"  # the idle timeout ran out for a sequence
    REAPER_FORCE_END = "reaper_force_end"  # ...and the reaper ended it, freeing its slot
    SEQUENCE_ENQUEUED = "sequence_enqueued"  # request placed in a batcher's slot
    BACKLOG_ENQUEUED = "backlog_enqueued"  # no free slot: the sequence waits
    SEQUENCE_END = "sequence_end"  # END reached the batcher
    SLOT_FREED = "slot_freed"
    CANCELLED_RELEASED = "cancelled_released"  # a cancelled request released its sequence
    MODEL_LOADING = "model_loading"
    MODEL_LOADED = "model_loaded"
    MODEL_UNLOADED = "model_unloaded"
    MODEL_LOAD_FAILED = "model_load_failed"


MIN_VERBOSITY: dict[LogCode, int] = {
    code: 0
    for code in (LogCode.SEQUENCE_CONFLICT, LogCode.MODEL_LOADING, LogCode.MODEL_LOADED, LogCode.MODEL_UNLOADED, LogCode.MODEL_LOAD_FAILED)
} | {
    code: 1
    for code in (
        LogCode.START_FLAG_MISSING, LogCode.INFER_FAILED, LogCode.REAPER_IDLE, LogCode.REAPER_FORCE_END,
        LogCode.SEQUENCE_ENQUEUED, LogCode.BACKLOG_ENQUEUED, LogCode.SEQUENCE_END, LogCode.SLOT_FREED,
        LogCode.CANCELLED_RELEASED,
    )
}


class Unavailable(str, Enum):
    """Why a window reads nothing."""

    EXTERNAL_SERVER = "external_server"  # TRITON_URL: its log is not on this machine
    NOT_STARTED = "not_started"  # the embedded server is not running


# Message patterns from Triton 2.51's source (sequence_batch_scheduler.cc, model_lifecycle.cc,
# http_server.cc). First match wins: the START-flag refusal is also an "Infer failed".
_ID = r"(?P<corrid>\S+)"
_REQUEST = r"\[request id: [^\]]*\] "  # InferenceRequest::LogRequest(), before some lines
_PATTERNS: tuple[tuple[LogCode, re.Pattern[str]], ...] = tuple(
    (code, re.compile(pattern))
    for code, pattern in (
        (LogCode.SEQUENCE_CONFLICT, rf"^sequence {_ID} for model '(?P<model>[^']+)' has a conflict\."),
        (LogCode.START_FLAG_MISSING, rf"inference request for sequence {_ID} to model '(?P<model>[^']+)' {START_REFUSAL}"),
        (LogCode.INFER_FAILED, r"Infer failed: (?P<error>.*)$"),
        (LogCode.REAPER_IDLE, rf"^Reaper: CORRID {_ID}: max sequence idle exceeded"),
        (LogCode.REAPER_FORCE_END, rf"^Reaper: force-ending CORRID {_ID} in batcher (?P<batcher>\S+), slot (?P<slot>\d+)"),
        (LogCode.SEQUENCE_ENQUEUED, rf"^Enqueuing CORRID {_ID} into batcher (?P<batcher>\S+), sequence slot (?P<slot>\d+): (?P<model>\S+)$"),
        (LogCode.BACKLOG_ENQUEUED, rf"^Enqueuing CORRID {_ID} into (?:new|existing) backlog: (?P<model>\S+)$"),
        # direct writes "End sequence"; oldest "end sequence" after the request's "[request id: X] "
        (LogCode.SEQUENCE_END, rf"^(?:{_REQUEST})?[Ee]nd sequence CORRID {_ID} in batcher (?P<batcher>\S+), slot (?P<slot>\d+)"),
        (LogCode.SLOT_FREED, r"^Freeing slot in batcher (?P<batcher>\S+), slot (?P<slot>\d+)"),
        (LogCode.CANCELLED_RELEASED, rf"^Releasing canceled sequence CORRID {_ID}"),  # the scheduler, for a queued request
        (LogCode.CANCELLED_RELEASED,  # oldest's batcher, for one it had taken
         rf"^(?:{_REQUEST})?force-end cancelled sequence CORRID {_ID} in batcher (?P<batcher>\S+), slot (?P<slot>\d+)"),
        (LogCode.MODEL_LOADING, r"^loading: (?P<model>[^:\s]+):(?P<version>\d+)"),
        (LogCode.MODEL_LOADED, r"^successfully loaded '(?P<model>[^']+)'"),
        (LogCode.MODEL_UNLOADED, r"^successfully unloaded '(?P<model>[^']+)' version (?P<version>\d+)"),
        (LogCode.MODEL_LOAD_FAILED, r"^failed to load '(?P<model>[^']+)'(?: version (?P<version>\d+))?(?:: (?P<error>.*))?"),
    )
)

# glog prefix: level, MMDD, time, thread/process id, file:line] message
_PREFIX = re.compile(
    r"^(?P<level>[IWEF])(?P<date>\d{4}) (?P<time>\d{2}:\d{2}:\d{2}\.\d{6})\s+(?P<pid>\d+) "
    r"(?P<file>[^\s:\]]+):(?P<line>\d+)\] ?(?P<message>.*)$"
)
_JSON = json.JSONDecoder()
# Instances are named <model>_<group index>_<instance index> unless a group is named.
_INSTANCE_SUFFIX = re.compile(r"_\d+_\d+$")


class _Logged(Protocol):
    """What a log window needs of a server (a LabServer, or a run's view of one)."""

    @property
    def log_path(self) -> Path | None: ...
    @property
    def is_embedded(self) -> bool: ...


class LoggingServer(_Logged, Protocol):
    """What raising the log's verbosity needs of a server (app/lab/server's LabServer)."""

    @property
    def url(self) -> str: ...
    def client(self, timeout_s: float = 60.0) -> http.InferenceServerClient: ...


@dataclass
class LogEntry:
    level: Level
    date: str  # MMDD: glog writes no year
    time: str  # HH:MM:SS.ffffff
    source: str  # file:line in Triton's source
    message: str  # decoded message, continuation lines included
    raw: str  # the line(s) exactly as written, to quote verbatim
    code: LogCode | None = None
    values: dict[str, str] = field(default_factory=dict)

    @property
    def model(self) -> str | None:
        """The model a line is about: named outright, or the owner of the batcher it names."""
        if "model" in self.values:
            return self.values["model"]
        if "batcher" in self.values:
            return _INSTANCE_SUFFIX.sub("", self.values["batcher"])
        return None

    @property
    def corrid(self) -> str | None:
        return self.values.get("corrid")


def split_line(line: str) -> list[str]:
    """A written line as the entries it holds, usually one.

    Seen on the embedded server under load: a whole entry written inside another one, between
    its message and its newline (`..."HTTP release: size 4, ..."I1202 04:51:10.651547 10751
    infer_response.cc:174] "add response..."`, then an empty line), because the server's
    frontend and its core log through loggers that do not share a lock. An escaped message is a
    JSON string, so where it ends is known exactly; a prefix right after it starts the next entry.
    An unescaped message has no such end and is kept whole."""
    parts = []
    while (rest := _entry_after_message(line)) is not None:
        parts.append(line[: len(line) - len(rest)])
        line = rest
    parts.append(line)
    return parts


def _entry_after_message(line: str) -> str | None:
    """What follows a prefixed line's escaped message when it is another entry; else None."""
    match = _PREFIX.match(line)
    if not match or not match["message"].startswith('"'):
        return None
    try:
        _, end = _JSON.raw_decode(match["message"])
    except ValueError:
        return None
    rest = match["message"][end:]
    return rest if _PREFIX.match(rest) else None


def parse_line(line: str) -> LogEntry | None:
    """One prefixed log line; None for a line without Triton's prefix (a continuation). A line
    that holds several entries (split_line) gives its first."""
    return _entry(split_line(line.rstrip("\n"))[0])


def _entry(line: str) -> LogEntry | None:
    """The entry of a line that holds at most one (split_line's parts)."""
    match = _PREFIX.match(line)
    if not match:
        return None
    entry = LogEntry(
        level=Level(match["level"]),
        date=match["date"],
        time=match["time"],
        source=f"{match['file']}:{match['line']}",
        message=_decode(match["message"]),
        raw=line,
    )
    classify(entry)
    return entry


def parse(lines: Iterable[str]) -> list[LogEntry]:
    """Entries from log lines; lines without a prefix continue the entry before them. Blank lines
    are skipped: one is left wherever an entry was written inside another (split_line)."""
    entries: list[LogEntry] = []
    for line in (part for written in lines for part in split_line(written.rstrip("\n"))):
        if not line.strip():
            continue
        entry = _entry(line)
        if entry is not None:
            entries.append(entry)
        elif entries:
            entries[-1].raw += "\n" + line
            entries[-1].message += "\n" + line
    return entries


def classify(entry: LogEntry) -> LogEntry:
    for code, pattern in _PATTERNS:
        match = pattern.search(entry.message)
        if match:
            entry.code = code
            entry.values = {k: v for k, v in match.groupdict().items() if v is not None}
            break
    return entry


def _decode(message: str) -> str:
    # Escaped messages are JSON strings; an unescaped one is kept as written.
    if len(message) >= 2 and message.startswith('"') and message.endswith('"'):
        try:
            return str(json.loads(message))
        except ValueError:
            pass
    return message


def select(
    entries: Iterable[LogEntry],
    model: str | None = None,
    corrids: Iterable[int | str] | None = None,
    codes: Iterable[LogCode] | None = None,
) -> list[LogEntry]:
    """Entries about `model`, carrying one of `corrids`, with one of `codes` (each optional)."""
    wanted_ids = None if corrids is None else {str(c) for c in corrids}
    wanted_codes = None if codes is None else set(codes)
    out = []
    for entry in entries:
        if model is not None and entry.model != model:
            continue
        if wanted_ids is not None and entry.corrid not in wanted_ids:
            continue
        if wanted_codes is not None and entry.code not in wanted_codes:
            continue
        out.append(entry)
    return out


class LogWindow:
    """The lines a server log gains from now on; empty (never failing) when unavailable."""

    def __init__(self, path: Path | None, unavailable: Unavailable | None = None):
        self.path = Path(path) if path is not None else None
        self.unavailable = unavailable if path is None else None
        if self.path is None and self.unavailable is None:
            self.unavailable = Unavailable.NOT_STARTED
        self.offset = _line_start_at_end(self.path)

    @classmethod
    def start(cls, server: _Logged) -> LogWindow:
        """A window on a LabServer's log, opened at its current end. An external server's log is
        read only when TRITON_LOG_FILE names it (LabServer.log_path)."""
        if server.log_path is None:
            return cls(None, Unavailable.NOT_STARTED if server.is_embedded else Unavailable.EXTERNAL_SERVER)
        return cls(server.log_path)

    @property
    def available(self) -> bool:
        return self.unavailable is None

    def text(self) -> str:
        """Complete lines written since the window opened (a line still being written waits)."""
        if self.path is None:
            return ""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return ""
        end = data.rfind(b"\n")
        return data[: end + 1].decode(errors="replace") if end >= 0 else ""

    def lines(self) -> list[str]:
        return self.text().splitlines()

    def settle(self, quiet_s: float = 0.2, limit_s: float = 3.0) -> None:
        """Wait until the log has stopped growing for quiet_s (Triton writes a request's last lines
        just after its reply), or limit_s at most: the condition, not a fixed pause, so a busy
        machine that writes late is waited for and an idle one is not."""
        if self.path is None:
            return
        deadline, size, quiet_since = time.monotonic() + limit_s, -1, time.monotonic()
        while time.monotonic() < deadline:
            now = self.path.stat().st_size if self.path.exists() else 0
            if now != size:
                size, quiet_since = now, time.monotonic()
            elif time.monotonic() - quiet_since >= quiet_s:
                return
            time.sleep(0.05)

    def entries(self) -> list[LogEntry]:
        return parse(self.lines())

    def select(self, model: str | None = None, corrids: Iterable[int | str] | None = None,
               codes: Iterable[LogCode] | None = None) -> list[LogEntry]:
        return select(self.entries(), model=model, corrids=corrids, codes=codes)


def _line_start_at_end(path: Path | None, block: int = 65536) -> int:
    """Offset just after the file's last newline: a line being written as the window opens
    is read whole, never from its middle."""
    if path is None:
        return 0
    try:
        with open(path, "rb") as handle:
            end = handle.seek(0, 2)
            while end > 0:
                start = max(0, end - block)
                handle.seek(start)
                newline = handle.read(end - start).rfind(b"\n")
                if newline >= 0:
                    return start + newline + 1
                end = start
    except OSError:
        pass
    return 0


# One verbosity for the whole server: overlapping runs share a raise, the last one restores.
_raise_lock = threading.Lock()
_raised: dict[str, list[int]] = {}  # url -> [holders, level before the first raise, level now]


@contextmanager
def raised_verbosity(server: LoggingServer, level: int = 1) -> Iterator[bool]:
    """Raise the embedded server's --log-verbose for the duration (yields whether it did).

    Triton's logging extension changes verbosity at run time. An external server's settings
    are not ours to change unless its log was handed to the lab (TRITON_LOG_FILE), which makes
    it the lab's server; otherwise nothing happens there.
    """
    if server.log_path is None:
        yield False
        return
    db_url = database.class_database_url()
    if getattr(server, "external_url", None) and database.is_shared(db_url):
        # A server that replicas may share: one count of raises across them (shared_verbosity).
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(shared_verbosity.raised(server, level, db_url))
            except Exception:  # no logging extension, the server or the database away: the run goes on without
                yield False
                return
            yield True
        return
    url = server.url
    with _raise_lock:
        holders = _raised.get(url)
        try:
            with server.client(timeout_s=10) as client:
                if holders is None:
                    before = int(client.get_log_settings().get("log_verbose_level", 0))
                    holders = _raised[url] = [0, before, before]
                if level > holders[2]:
                    client.update_log_settings({"log_verbose_level": level})
                    holders[2] = level
        except Exception:  # no logging extension, or the server is gone: the run goes on without
            if holders is not None and holders[0] == 0:
                del _raised[url]
            holders = None
        if holders is not None:
            holders[0] += 1
    if holders is None:
        yield False
        return
    try:
        yield True
    finally:
        with _raise_lock:
            holders = _raised[url]
            holders[0] -= 1
            if holders[0] == 0:
                del _raised[url]
                with contextlib.suppress(Exception), server.client(timeout_s=10) as client:  # a server that died meanwhile has no verbosity to restore
                    client.update_log_settings({"log_verbose_level": holders[1]})
