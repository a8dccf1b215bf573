"""Which server and which model a check talks to, what it may create there, and cleaning up after it.

Two kinds of target:
- the embedded server serving a repository the user names (`--model-repository DIR`, default the
  lab's own): the checker starts that server (explicit model control), loads the model from the
  repository, has its files, and so may load a temporary one-instance copy of it;
- an external Triton (`--url`, or TRITON_URL): nothing is started, loaded or unloaded there
  except what the checker creates, and it creates nothing because it has no model files: the
  one-instance variant is skipped and the report says so.
A page that checks the app's own server (a LabServer) builds a Target on it with `on_server`.

The one-instance copy has a name of its own (<model>__check1_<hex>), so nobody else's traffic
reaches it, and is unloaded afterwards, also when the check fails. The model's config and
metadata are read from the server (`facts`), never from a file that may differ.
"""
from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonclient.utils import InferenceServerException

from app.checker.engine import compare
from app.checker.engine.facts import ModelFacts
from app.lab.deployment import DeploymentError, deployments
from app.lab.paths import MODEL_REPOSITORY
from app.lab.problems import LabError
from app.lab.server import LabServer, UnreachableError, address

if TYPE_CHECKING:
    from tritonclient.http import InferenceServerClient

COPY_SUFFIX = "__check1_"
MAX_FILES_BYTES = 256 * 2**20  # load_model carries files inside one JSON request: a bigger model is not copied
UNLOAD_WAIT_S = 30.0


class CopySkipped(Exception):
    """The one-instance copy cannot be made: .reason is a code, .values what the report shows."""

    def __init__(self, reason: str, **values: object):
        super().__init__(reason)
        self.reason, self.values = reason, values


@dataclass
class Target:
    server: LabServer  # started
    model: str
    files: dict[str, bytes] | None = None  # load_model's files for a copy: {"file:1/model.py": bytes}
    owns_server: bool = False  # started for this check: stopped by close()
    grpc_address: str | None = None  # the gRPC endpoint (host:port) where it is not the server's own (--grpc-url)

    @property
    def grpc_url(self) -> str:
        """host:port the gRPC transports send to."""
        return self.grpc_address or self.server.grpc_url

    @property
    def where(self) -> str:
        return "embedded" if self.server.is_embedded else "external"

    def close(self) -> None:
        if self.owns_server:
            self.server.stop()

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_target(model: str, url: str | None = None, repository: Path | None = None,
                on_start: Callable[[], None] | None = None, grpc_url: str | None = None) -> Target:
    """The target the CLI names: an external server (url, else TRITON_URL) or the embedded one
    serving `repository` (default the lab's). The embedded one is started (on_start() is called
    just before) and the model loaded. grpc_url: the gRPC endpoint where it is not the server's own."""
    url = url or address.from_environment("TRITON_URL")
    if url and repository is not None:
        raise LabError("check_url_and_repository")
    if url:
        server = LabServer(url=url)
        if os.environ.get("TRITON_TRACE_DIR"):
            server.trace_dir = Path(os.environ["TRITON_TRACE_DIR"])
        if os.environ.get("TRITON_LOG_FILE"):
            server.external_log = Path(os.environ["TRITON_LOG_FILE"])
        try:
            return Target(server.start(), model, grpc_address=grpc_url)
        except UnreachableError:  # the user's address: said in their language, with what to do
            raise LabError("check_server_unreachable", url=url) from None
    repository = Path(repository or MODEL_REPOSITORY)
    if not (repository / model / "config.pbtxt").is_file():
        found = sorted(p.parent.name for p in repository.glob("*/config.pbtxt"))
        raise LabError("check_model_not_in_repository", model=model, repository=str(repository), models=", ".join(found) or "-")
    if on_start is not None:
        on_start()
    server = LabServer(model_repository=repository).start()
    try:
        server.models.ensure(model)
    except DeploymentError as err:
        server.stop()
        raise LabError("check_model_load_failed", model=model, message=err.values.get("message", str(err))) from None
    except BaseException:
        server.stop()
        raise
    return Target(server, model, files=repository_files(repository / model), owns_server=True, grpc_address=grpc_url)


def on_server(server: LabServer, model: str, files: dict[str, bytes] | None = None) -> Target:
    """A target on a server someone else started (the app's own, a test's): the model must be
    loaded there already. Files: given, else the server's repository's when it is embedded."""
    if files is None and server.is_embedded and (server.model_repository / model / "config.pbtxt").is_file():
        files = repository_files(server.model_repository / model)
    return Target(server, model, files)


def repository_files(model_dir: Path) -> dict[str, bytes] | None:
    """Every file of a repository model but its config, as load_model takes them (links followed)."""
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(model_dir.rglob("*")):
        if path.is_dir() or path.name == "config.pbtxt" or "__pycache__" in path.parts:
            continue
        data = path.read_bytes()
        total += len(data)
        if total > MAX_FILES_BYTES:
            return None
        files[f"file:{path.relative_to(model_dir).as_posix()}"] = data
    return files


def facts(target: Target) -> ModelFacts:
    """The model's config and metadata as the server gives them; LabError when it has no such
    model ready."""
    with target.server.client(timeout_s=30) as client:
        try:
            config = client.get_model_config(target.model)
            metadata = client.get_model_metadata(target.model)
        except InferenceServerException as err:
            index, message = _index(client), err.message()
        else:
            return ModelFacts.read(config, metadata)
    entry = next((e for e in index if e.get("name") == target.model), None)
    if entry is None:
        names = ", ".join(sorted(e["name"] for e in index if e.get("state") == "READY" and COPY_SUFFIX not in e["name"]))
        raise LabError("check_model_unknown", model=target.model, url=target.server.url, models=names or "-")
    raise LabError("check_model_not_ready", model=target.model, state=entry.get("state", "") or "-",
                   reason=entry.get("reason", "") or message or "-")


def server_version(target: Target) -> str | None:
    """The version the server reports in its metadata (GET /v2: "2.51.0" for release 24.10), or
    None when it reports none."""
    try:
        with target.server.client(timeout_s=30) as client:
            version = client.get_server_metadata().get("version")
    except InferenceServerException:
        return None
    return str(version) if version else None


def _index(client: InferenceServerClient) -> list[dict[str, Any]]:  # Any: the server's JSON, as tritonclient gives it
    try:
        return list(client.get_model_repository_index())
    except InferenceServerException:
        return []


def copy_files(target: Target, model_facts: ModelFacts) -> dict[str, bytes]:
    """The files a copy needs, or CopySkipped saying why the checker does not have them."""
    if model_facts.instances <= 1:
        raise CopySkipped("single_instance", instances=model_facts.instances)
    if not target.server.is_embedded:
        raise CopySkipped("external_server", url=target.server.url)
    files = target.files
    code = {"recogniser": deployments.RECOGNISER_CODE, "generator": deployments.GENERATOR_CODE}.get(compare.lab_model(model_facts) or "")
    if files is None and code is not None:  # one of the lab's own models: the lab has its code
        files = {"file:1/model.py": code.read_bytes()}
    if files is None:
        raise CopySkipped("no_model_files", model=model_facts.name)
    return files


@contextmanager
def one_instance_copy(target: Target, model_facts: ModelFacts) -> Iterator[str]:
    """Load a count-1 copy of the model under a name of its own; yield that name; unload it.
    CopySkipped (before anything is loaded) when the checker may not or cannot."""
    files = copy_files(target, model_facts)
    name = f"{model_facts.name}{COPY_SUFFIX}{secrets.token_hex(3)}"
    config = json.loads(json.dumps(model_facts.config))
    config["name"] = name
    groups = config.get("instance_group") or [{}]
    first = {"count": 1, "kind": groups[0].get("kind", "KIND_AUTO")}
    if groups[0].get("gpus"):
        first["gpus"] = groups[0]["gpus"][:1]
    config["instance_group"] = [first]
    try:
        with target.server.client(timeout_s=300) as client:
            client.load_model(name, config=json.dumps(config), files=files)
    except InferenceServerException as err:
        _unload(target, name)  # a half-loaded copy must not stay behind
        raise CopySkipped("copy_refused", message=err.message() or str(err)) from None
    try:
        yield name
    finally:
        _unload(target, name)


def _unload(target: Target, name: str) -> None:
    """Unload the copy and wait until the server no longer serves it (a dead server holds nothing)."""
    try:
        client = target.server.client(timeout_s=30)
    except Exception:
        return
    with client:
        try:
            client.unload_model(name)
        except Exception:
            return
        deadline = time.monotonic() + UNLOAD_WAIT_S
        while time.monotonic() < deadline:
            try:
                if not client.is_model_ready(name):
                    return
            except Exception:
                return
            time.sleep(0.1)
