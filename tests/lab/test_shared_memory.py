"""Removing a server's stub regions by prefix touches its own regions only."""
from __future__ import annotations

from app.lab import shared_memory


def test_only_regions_under_a_servers_own_prefix_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(shared_memory, "SHM_DIR", tmp_path)
    ours, neighbour = f"{shared_memory.PREFIX}aaaa_", f"{shared_memory.PREFIX}bbbb_"
    for name in (f"{ours}1", f"{ours}2", f"{neighbour}1", "triton_python_backend_shm_region_1"):
        (tmp_path / name).write_bytes(b"x")
    # the bare prefix, Triton's default and anything else name no server of ours: nothing goes
    for prefix in (shared_memory.PREFIX, "", "triton_python_backend_shm_region_", "triton"):
        assert shared_memory.remove(prefix) == 0
    assert shared_memory.remove(ours) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{neighbour}1", "triton_python_backend_shm_region_1"]
