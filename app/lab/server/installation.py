"""Find the Triton server that the nvidia-pytriton wheel ships and prepare its backend folder.

The wheel carries a complete tritonserver, the Python backend and one stub per Python
version; the stub must sit inside the backend folder, so we assemble one in the cache.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from app.lab.paths import cache_dir
from app.lab.server.errors import InstallationError


@dataclass(frozen=True)
class Installation:
    executable: Path
    backend_dir: Path
    library_dir: Path
    python_bin_dir: Path
    allocator: Path | None = None  # preloaded into the server when found (see _allocator)
    cache_dir: Path | None = None  # the wheel's response caches (caches/local/libtritoncache_local.so), when shipped
    python_library_dir: Path | None = None  # this interpreter's own libpython, found first by the stub (see below)


def _package_root() -> Path:
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        raise InstallationError("server_package_missing")
    return Path(list(spec.submodule_search_locations)[0])


def locate() -> Installation:
    """Check every piece the embedded server needs; raise one clear line for the first missing one."""
    root = _package_root()
    server_root = root / "tritonserver"
    executable = server_root / "bin" / "tritonserver"
    if not executable.exists():
        raise InstallationError("server_executable_missing", path=str(server_root))
    version = "{}.{}".format(*sys.version_info[:2])
    stub = server_root / "python_backend_stubs" / version / "triton_python_backend_stub"
    if not stub.exists():
        shipped = sorted(p.name for p in (server_root / "python_backend_stubs").iterdir() if p.is_dir())
        raise InstallationError("server_no_stub", version=version, shipped=", ".join(shipped))
    library_dir = root.parent / "nvidia_pytriton.libs"
    if not library_dir.is_dir():
        raise InstallationError("server_libraries_missing", path=str(library_dir))
    backend_dir = _assemble_backend_dir(server_root / "backends" / "python", stub, version)
    caches = server_root / "caches"
    return Installation(executable, backend_dir, library_dir, Path(sys.executable).parent, _allocator(),
                        caches if (caches / "local" / "libtritoncache_local.so").is_file() else None,
                        _python_library_dir())


def _python_library_dir() -> Path | None:
    """The folder of the libpython this interpreter was built with, when it is a shared library.

    The stub links libpython3.X.so.1.0 by name, so it loads whichever the dynamic linker finds
    first (seen: Debian's 3.11.2) while it runs this interpreter's standard library (seen:
    pyenv's 3.11.7). Extension modules built for the newer patch release then fail to load
    (`_ssl`: "undefined symbol: _PyModule_Add"), and with them everything that imports ssl,
    transformers included. Putting the interpreter's own library first makes the pair match.
    """
    libdir, library = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY")
    if not libdir or not library or not str(library).endswith(".so"):
        return None
    folder = Path(libdir)
    return folder if (folder / f"{library}.1.0").exists() or (folder / str(library)).exists() else None


# Triton 2.51's tracer frees a finished trace while still holding that trace's mutex (fixed
# upstream in server PR 8144, April 2025). Under glibc malloc the late unlock writes into the
# allocator's free lists, and after some thousands of traced requests the server dies (SIGSEGV,
# or "malloc(): unaligned fastbin chunk detected"). jemalloc keeps no bookkeeping inside freed
# blocks, and Triton's model_management.md recommends preloading it (or tcmalloc) anyway.
JEMALLOC = ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
            "/usr/lib64/libjemalloc.so.2", "/usr/lib/libjemalloc.so.2")


def _allocator() -> Path | None:
    """jemalloc when the system has it (Debian: libjemalloc2), unless TRITON_LAB_MALLOC=glibc."""
    if os.environ.get("TRITON_LAB_MALLOC", "").lower() == "glibc":
        return None
    return next((Path(p) for p in JEMALLOC if Path(p).exists()), None)


def _assemble_backend_dir(python_backend: Path, stub: Path, version: str) -> Path:
    backends = cache_dir() / f"backends-py{version}"
    target = backends / "python"
    target.mkdir(parents=True, exist_ok=True)
    for source in (python_backend / "libtriton_python.so", python_backend / "triton_python_backend_utils.py", stub):
        dest = target / source.name
        # Copy only when changed, so two app processes starting together do not race on it.
        if not dest.exists() or dest.stat().st_size != source.stat().st_size:
            tmp = dest.with_suffix(dest.suffix + f".tmp{id(dest)}")
            shutil.copy2(source, tmp)
            tmp.replace(dest)
    return backends
