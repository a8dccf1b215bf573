"""The tests' PostgreSQL (tests/postgres.py) is a real server: it starts, keeps an acknowledged
write across a restart on the same port, and leaves no process of its data folder after stop."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.postgres import INSTALL, PostgresMissing, PostgresServer, find_bin, group_members, processes_naming


@pytest.mark.server  # a PostgreSQL of its own
def test_start_write_restart_read_stop_leaves_nothing_running():
    server = PostgresServer()
    try:
        server.start()
        assert server.running and server.port
        pid, data, port = server.postmaster_pid, str(server.data), server.port
        assert server.processes(), "a started server has its postmaster and helpers"
        url = server.create_database("restart_proof")
        assert url == f"postgresql+psycopg://postgres:{server.password}@127.0.0.1:{port}/restart_proof"

        engine = sa.create_engine(url)
        try:
            with engine.begin() as conn:  # committed: acknowledged before the restart
                conn.execute(sa.text("CREATE TABLE votes (voter text PRIMARY KEY, option text NOT NULL)"))
                conn.execute(sa.text("INSERT INTO votes VALUES ('a', 'foreign'), ('b', 'intact')"))
        finally:
            engine.dispose()

        server.restart()
        assert server.port == port and str(server.data) == data, "a restart keeps the data folder and the port"
        assert server.postmaster_pid != pid, "a new postmaster serves after the restart"
        assert not group_members(pid), "nothing of the first postmaster is left"

        engine = sa.create_engine(url)
        try:
            with engine.connect() as conn:
                rows = conn.execute(sa.text("SELECT voter, option FROM votes ORDER BY voter")).all()
                assert conn.execute(sa.text("SHOW listen_addresses")).scalar() == "127.0.0.1"
        finally:
            engine.dispose()
        assert [tuple(r) for r in rows] == [("a", "foreign"), ("b", "intact")]

        pid = server.postmaster_pid
        server.stop()
        assert not server.running
        assert not group_members(pid), "stop leaves no process of the postmaster's group"
        assert not processes_naming(data), "stop leaves no process naming the data folder"
        assert Path(data).is_dir(), "stop keeps the data (restart needs it)"
    finally:
        server.close()
    assert not Path(data).exists(), "close removes the folder"


def test_the_session_server_gives_each_test_its_own_database(postgres_server, postgres_url):
    assert postgres_url.startswith(f"postgresql+psycopg://postgres:{postgres_server.password}@127.0.0.1:{postgres_server.port}/")
    name = postgres_url.rsplit("/", 1)[1]
    other = postgres_server.fresh_database("test_the_session_server")
    assert other != postgres_url
    listed = postgres_server.psql("SELECT datname FROM pg_database").split()
    assert name in listed and other.rsplit("/", 1)[1] in listed


def test_missing_binaries_fail_with_the_install_command(tmp_path):
    (tmp_path / "15" / "bin").mkdir(parents=True)  # a folder without the programs
    with pytest.raises(PostgresMissing, match=r"apt-get install -y postgresql"):
        find_bin(tmp_path)
    assert "apt-get install -y postgresql" in INSTALL


def test_the_highest_version_is_chosen(tmp_path):
    for version in ("9.6", "15", "13"):
        folder = tmp_path / version / "bin"
        folder.mkdir(parents=True)
        for tool in ("initdb", "pg_ctl", "postgres", "psql"):
            (folder / tool).write_text("")
    assert find_bin(tmp_path) == tmp_path / "15" / "bin"
    assert os.path.basename(find_bin().parent) == max(os.listdir("/usr/lib/postgresql"), key=lambda v: float(v))
