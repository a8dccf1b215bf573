"""What is loaded on a Triton that several app replicas share, kept in the class database.

The same stub budget and least-recently-used unloading as LoadedModels, over every replica's loads
(the memory budget is LoadedModels' alone: it measures stubs it can see, and an external server's
processes may be on another machine):
a row of loaded_deployments per deployment on the server (its stubs, the config it was loaded
with, when it was last used, whether its load is still under way). Every decision about the
server's models is taken under one advisory lock per server, and an unload happens while that
lock is held, so a replica about to use a deployment waits for an unload to finish and loads it
again rather than running on a model that is going away. A deployment with a run or a check in
progress on any replica (an active ticket of the shared run queue) is never unloaded.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import sqlalchemy as sa
from tritonclient.grpc import model_config_pb2 as mc

from app.lab import database
from app.lab.database import schema as t
from app.lab.database.leases import server_lock, server_name
from app.lab.deployment.deployments import instance_count
from app.lab.deployment.loaded_models import FIRST_GUESS_INSTANCE_MB, LOAD_TIMEOUT_S, DeploymentCost, LoadedModels, MemoryReport
from app.lab.problems import LabError
from app.lab.traffic import OnWait, SharedRunQueue, run_queue

if TYPE_CHECKING:
    from app.lab.deployment.loaded_models import ModelServer

_rows = t.loaded_deployments


class SharedLoadedModels(LoadedModels):
    def __init__(self, server: ModelServer, db_url: str, budget: int | None = None, capacity_wait_s: float | None = None):
        super().__init__(server, budget, **({} if capacity_wait_s is None else {"capacity_wait_s": capacity_wait_s}))
        self.db_url = db_url

    @property
    def _name(self) -> str:
        return server_name(self.server.url)

    def _mine(self) -> sa.ColumnElement[bool]:
        return _rows.c.server == self._name

    @contextmanager
    def _locked(self) -> Iterator[sa.Connection]:
        with database.writing(self.db_url) as conn:
            server_lock(conn, "models", self._name)
            # A load that never finished (its replica died) gives its stubs back after the load timeout.
            stale = sa.func.now() - sa.func.make_interval(0, 0, 0, 0, 0, 0, LOAD_TIMEOUT_S)
            conn.execute(_rows.delete().where(self._mine(), _rows.c.loading, _rows.c.used_at < stale))
            yield conn

    def in_use(self) -> int:
        with database.reading(self.db_url) as conn:
            return int(conn.execute(sa.select(sa.func.coalesce(sa.func.sum(_rows.c.stubs), 0)).where(self._mine())).scalar_one())

    def loaded(self) -> list[str]:
        with database.reading(self.db_url) as conn:
            return list(conn.execute(sa.select(_rows.c.name).where(self._mine(), ~_rows.c.loading)
                                     .order_by(_rows.c.used_at)).scalars())

    def forget(self) -> None:
        with self._locked() as conn:
            conn.execute(_rows.delete().where(self._mine()))

    def memory(self) -> MemoryReport:
        """Every replica's loads, each expected at FIRST_GUESS_INSTANCE_MB per instance (not measured)."""
        busy = self._busy()
        with database.reading(self.db_url) as conn:
            rows = conn.execute(_rows.select().where(self._mine(), ~_rows.c.loading).order_by(_rows.c.used_at)).all()
        costs = [DeploymentCost(row.name, row.stubs, row.stubs * FIRST_GUESS_INSTANCE_MB, False, row.name in busy)
                 for row in rows]
        return MemoryReport(self.memory_budget_mb, sum(c.cost_mb for c in costs), self.budget, self.in_use(), costs, [])

    def ensure(self, name: str, config: mc.ModelConfig | None = None, with_code: bool = False,
               name_fixes_config: bool = False, on_wait: OnWait | None = None) -> None:
        known = self._remember(name, config, with_code)
        with self._name_lock(name):
            if known is None:
                return self._ensure_unknown(name)
            need = instance_count(known.config)
            deadline = time.monotonic() + self.capacity_wait_s
            while True:
                with self._locked() as conn:
                    row = conn.execute(_rows.select().where(self._mine(), _rows.c.name == name)).first()
                    if row is None or not row.loading:  # another replica's load of it is not under way
                        adopt = row is None and (config is None or name_fixes_config)
                        if (adopt or (row is not None and row.config_text == known.text)) and self._ready(name):
                            if adopt:
                                conn.execute(_rows.insert().values(server=self._name, name=name, stubs=need,
                                                                   config_text=known.text))
                            else:
                                conn.execute(_rows.update().where(self._mine(), _rows.c.name == name)
                                             .values(used_at=sa.func.now()))
                            return
                        if self._make_room(conn, name, need):
                            values = dict(stubs=need, config_text=known.text, loading=True, used_at=sa.func.now())
                            if row is None:
                                conn.execute(_rows.insert().values(server=self._name, name=name, **values))
                            else:  # replacing its config: its old stubs give way to the new ones
                                conn.execute(_rows.update().where(self._mine(), _rows.c.name == name).values(**values))
                            replaced = row
                            break
                    if need > self.budget or time.monotonic() > deadline:
                        raise LabError("capacity_full", budget=self.budget, in_use=self.in_use(), need=need,
                                       waited=round(self.capacity_wait_s))
                time.sleep(run_queue.POLL_S)  # other replicas cannot notify this one: it looks again
            loaded = False
            try:
                self._load(known)
                loaded = True
            finally:
                with self._locked() as conn:
                    where = _rows.update().where(self._mine(), _rows.c.name == name)
                    if loaded:
                        conn.execute(where.values(loading=False, used_at=sa.func.now()))
                    elif replaced is not None:  # Triton keeps serving the old config when a reload fails
                        conn.execute(where.values(stubs=replaced.stubs, config_text=replaced.config_text, loading=False))
                    else:
                        conn.execute(_rows.delete().where(self._mine(), _rows.c.name == name))

    def _make_room(self, conn: sa.Connection, name: str, need: int) -> bool:
        """Unload idle deployments, least recently used first, until `need` more stubs fit; whether
        they do. Runs under the server's lock, unloads included."""
        rows = conn.execute(_rows.select().where(self._mine()).order_by(_rows.c.used_at)).all()
        in_use = sum(row.stubs for row in rows if row.name != name)
        if in_use + need <= self.budget:
            return True
        busy = self._busy()
        for row in rows:
            if in_use + need <= self.budget:
                break
            if row.name == name or row.loading or row.name in busy:
                continue
            conn.execute(_rows.delete().where(self._mine(), _rows.c.name == row.name))
            self._unload(row.name)
            in_use -= row.stubs
        return bool(in_use + need <= self.budget)

    def _busy(self) -> set[str]:
        queue = run_queue.for_server(self.server.url)
        return queue.busy() if isinstance(queue, SharedRunQueue) else set()
