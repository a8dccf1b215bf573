"""Fixtures for the claims tests (helpers live in tests/claims/helpers.py)."""
from __future__ import annotations

import pytest


@pytest.fixture()
def client(lab_server):
    return lab_server.client()
