"""Which database holds the class: TRITON_LAB_DATABASE_URL, else Streamlit's usual place for a
connection (`[connections.class_store]` in .streamlit/secrets.toml, as `st.connection` reads it),
else an SQLite file in the data folder (one process, nothing to set up).

The secrets file is read here, not through st.secrets, so the command line and the tests find
the same database the pages do; Streamlit looks in the same two files (the user's and the
working directory's, the latter winning).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from app.lab.paths import data_dir

URL_ENV = "TRITON_LAB_DATABASE_URL"
CONNECTION = "class_store"
FILE_NAME = "progress.sqlite3"
_URL_PARTS = ("username", "password", "host", "port", "database")


def secrets_files() -> list[Path]:
    return [Path.home() / ".streamlit" / "secrets.toml", Path.cwd() / ".streamlit" / "secrets.toml"]


def _read_toml(path: Path) -> dict[str, Any]:  # TOML of any shape, as tomllib and toml type it
    if sys.version_info >= (3, 11):
        import tomllib

        with path.open("rb") as handle:
            return tomllib.load(handle)
    import toml  # Python 3.10: Streamlit's own TOML reader (its dependency) reads the file

    return toml.loads(path.read_text(encoding="utf-8"))


def _from_secrets() -> str | None:
    found: dict[str, Any] = {}
    for path in secrets_files():
        try:
            section = _read_toml(path).get("connections", {}).get(CONNECTION)
        except (OSError, ValueError):  # TOMLDecodeError is a ValueError in both readers
            continue  # Streamlit itself reports a broken secrets file; the default stands
        if isinstance(section, dict):
            found.update(section)
    if not found:
        return None
    if found.get("url"):
        return str(found["url"])
    # st.connection's other spelling: dialect, driver and the URL's parts as keys.
    dialect = str(found.get("dialect", "postgresql"))
    driver = found.get("driver")
    parts = {key: found[key] for key in _URL_PARTS if found.get(key) not in (None, "")}
    if "port" in parts:
        parts["port"] = int(parts["port"])
    url = sa.URL.create(f"{dialect}+{driver}" if driver else dialect, **parts)
    return url.render_as_string(hide_password=False)


def sqlite_url(path: Path | str) -> str:
    return f"sqlite:///{Path(path).absolute()}"


def class_database_url() -> str:
    """The URL of the class store, decided at each call (tests switch it)."""
    given = os.environ.get(URL_ENV, "").strip()
    if given:
        return given
    return _from_secrets() or sqlite_url(data_dir() / FILE_NAME)


def is_shared(url: str) -> bool:
    """Whether several app processes can share this database's coordination: a server database.
    An SQLite file serves one app process (as before), whose leases stay in that process."""
    return not url.startswith("sqlite")
