"""Who may see what, free of Streamlit: the instructor key and learner identities.

Instructor key: TRITON_LAB_INSTRUCTOR_KEY in the environment, else `instructor_key` in
Streamlit's secrets (.streamlit/secrets.toml). With no key configured the instructor page is
open, which suits one laptop; a server that listens beyond localhost without a key is
warned about (at start-up and on the instructor pages).

Learner identity: a learner id is "<name>.<token>": the name the learner chose (or a
generated one) and a random token of TOKEN_LENGTH lowercase letters and digits. The id lives
in the browser session and in the quiz page's link (?learner=ada.k3j9...), so whoever holds
the link is that learner. A bare name (?learner=ada) is not an id: it opens nobody's
progress and gets a new id under that name. Instructor reports show the name part only.
Ids stored before tokens existed (bare names) stay readable to the instructor; no link
reaches them any more.
"""
from __future__ import annotations

import hmac
import ipaddress
import os
import re
import secrets
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TypeGuard

ENV_KEY = "TRITON_LAB_INSTRUCTOR_KEY"
SECRET_NAME = "instructor_key"

TOKEN_LENGTH = 24  # about 124 bits: guessing a classmate's link is hopeless
TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
SEPARATOR = "."
NAME_LIMIT = 40
GENERATED_PREFIX = "learner-"
_ID = re.compile(rf"^(?P<name>.+)\{SEPARATOR}(?P<token>[{TOKEN_ALPHABET}]{{{TOKEN_LENGTH}}})$", re.DOTALL)


# --- instructor key ---------------------------------------------------------------------

def configured_key(environ: Mapping[str, str] | None = None, secrets_source: Mapping[str, object] | None = None) -> str | None:
    """The instructor key, or None when none is configured (blank values count as none).

    secrets_source is anything with .get (Streamlit's st.secrets); reading it may raise
    when no secrets file exists, which means no key there.
    """
    environ = os.environ if environ is None else environ
    key = (environ.get(ENV_KEY) or "").strip()
    if key:
        return key
    if secrets_source is not None:
        try:
            value = secrets_source.get(SECRET_NAME)
        except Exception:  # no secrets.toml, or one that does not parse
            value = None
        if value is not None and str(value).strip():
            return str(value).strip()
    return None


def key_matches(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison; nothing matches a missing key or an empty answer."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), expected.encode("utf-8"))


def is_loopback(address: str | None) -> bool:
    """True when a server bound to address is reachable from this machine only.

    Streamlit's server.address unset (None or "") binds every interface, as do 0.0.0.0
    and ::; a host name other than localhost is taken as reachable from elsewhere.
    """
    text = (address or "").strip().strip("[]")
    if not text:
        return False
    if text.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False


def exposed_without_key(address: str | None, key: str | None) -> bool:
    """The case to warn about: reachable beyond this machine and no instructor key."""
    return not key and not is_loopback(address)


# --- learner identity -------------------------------------------------------------------

def new_token() -> str:
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))


def clean_name(text: object) -> str | None:
    """A learner's chosen name, trimmed: no control characters, spaces collapsed, at most
    NAME_LIMIT characters; None when nothing is left."""
    if not isinstance(text, str):
        return None
    kept = "".join(" " if unicodedata.category(c).startswith(("C", "Z")) else c for c in text)
    name = " ".join(kept.split())[:NAME_LIMIT].strip()
    return name or None


def make_learner_id(name: object = None, token: str | None = None) -> str:
    """A new learner id under name (a generated name when none is usable)."""
    chosen = clean_name(name) or GENERATED_PREFIX + secrets.token_hex(3)
    token = token if token is not None else new_token()
    if not re.fullmatch(rf"[{TOKEN_ALPHABET}]{{{TOKEN_LENGTH}}}", token):
        raise ValueError(f"a token is {TOKEN_LENGTH} lowercase letters and digits")
    return f"{chosen}{SEPARATOR}{token}"


def parse_learner_id(text: object) -> tuple[str, str] | None:
    """(name, token) of a well-formed learner id, else None (a bare name, a short token)."""
    if not isinstance(text, str):
        return None
    match = _ID.match(text)
    if match is None or clean_name(match["name"]) != match["name"]:
        return None
    return match["name"], match["token"]


def is_learner_id(text: object) -> TypeGuard[str]:
    return parse_learner_id(text) is not None


def renamed(learner_id: str, name: object) -> str | None:
    """The same learner under a new name (the token stays), or None when name is unusable."""
    parsed = parse_learner_id(learner_id)
    chosen = clean_name(name)
    if parsed is None or chosen is None:
        return None
    return f"{chosen}{SEPARATOR}{parsed[1]}"


def learner_name(learner_id: str) -> str:
    """The name part people read; an id stored before tokens existed is its own name."""
    parsed = parse_learner_id(learner_id)
    return parsed[0] if parsed else learner_id


def display_names(learner_ids: Iterable[str]) -> dict[str, str]:
    """Name parts for a report, numbered "ada (2)" when two learners chose the same name.

    Numbers follow the order given (the store lists learners in a stable order).
    """
    ids = list(dict.fromkeys(learner_ids))
    names = [learner_name(i) for i in ids]
    totals = Counter(names)
    seen: Counter[str] = Counter()
    out = {}
    for learner_id, name in zip(ids, names, strict=True):
        seen[name] += 1
        out[learner_id] = name if totals[name] == 1 or seen[name] == 1 else f"{name} ({seen[name]})"
    return out
