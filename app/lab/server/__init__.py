"""The lab's Triton: the embedded server or a reachable one, its errors, ports and processes.

Callers outside this package import from here, by name.
"""
from app.lab.server import address, memory
from app.lab.server.connection import LabServer
from app.lab.server.embedded import EmbeddedServer
from app.lab.server.errors import AddressError, InstallationError, ServerError, StartupError, UnreachableError
from app.lab.server.health import wait_until_ok
from app.lab.server.ports import free_ports, port_in_use
from app.lab.server.process_group import group_alive, stop_group
from app.lab.server.proxy import POLICIES as PROXY_POLICIES
from app.lab.server.proxy import NginxProxy, ProxyError, find_nginx

__all__ = [
    "AddressError",
    "PROXY_POLICIES",
    "EmbeddedServer",
    "InstallationError",
    "LabServer",
    "NginxProxy",
    "ProxyError",
    "ServerError",
    "address",
    "memory",
    "StartupError",
    "UnreachableError",
    "find_nginx",
    "free_ports",
    "group_alive",
    "port_in_use",
    "stop_group",
    "wait_until_ok",
]
