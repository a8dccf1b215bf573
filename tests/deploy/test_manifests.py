"""The Kubernetes manifests in deploy/k8s: every shape schema-valid for a fixed Kubernetes release,
and shaped the way the lab needs.

Two shapes share deploy/k8s/base: triton-per-pod (a GPU Triton inside every app pod, the app
talking to its own) and shared-triton (app replicas without a GPU, one Triton behind a Service).
Each is checked alone, with the optional class-db component (a PostgreSQL StatefulSet), and with
each way in to the app: the default gateway-api component (a Gateway and an HTTPRoute with cookie
session persistence) swapped for ingress-nginx (an Ingress with cookie affinity) or client-ip (a
LoadBalancer Service with ClientIP affinity). Replicas share the class through the database: no
shape with more than one app replica may be without it.

Built-in kinds are validated with kubernetes-validate; the Gateway and the HTTPRoute with the
schemas of the npm package @kubernetes-models/gateway-api (`npm ci` installs it), through node
and gateway_api.mjs beside this file.

kustomize may not be installed where the tests run, so `build` resolves a kustomization here:
resources (files and folders), components, strategic-merge patches and the image override, only
as far as these manifests use them (anything else raises). Where kubectl is installed, one test
compares the result with `kubectl kustomize`. Nothing is applied to a cluster; no Triton is needed.
"""
from __future__ import annotations

import copy
import fnmatch
import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import kubernetes_validate  # in the test extras: a missing package fails here, never skips
import pytest
import yaml

from app.lab.deployment import loaded_models

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy" / "k8s"
DOCKERFILE = REPO / "deploy" / "Dockerfile"
KUBERNETES_VERSION = "1.30.0"
TRITON_IMAGE = "nvcr.io/nvidia/tritonserver:24.10-py3"
APP_IMAGE = "triton-batching-lab"
KUSTOMIZATION = "kustomization.yaml"
SHAPES = ("triton-per-pod", "shared-triton")
CLASS_DB = "class-db"
# The ways in to the app, one per shape: a component each, the first the shapes list.
GATEWAY_API, INGRESS_NGINX, CLIENT_IP = WAYS_IN = ("gateway-api", "ingress-nginx", "client-ip")
COMPONENTS = (CLASS_DB, *WAYS_IN)
FOLDERS = ("base", *SHAPES, *COMPONENTS)
GATEWAY_API_GROUP = "gateway.networking.k8s.io"
GATEWAY_API_PACKAGE = "@kubernetes-models/gateway-api"
GATEWAY_API_CHECK = Path(__file__).with_name("gateway_api.mjs")
DATABASE_SECRET = "class-database"
DATABASE_KEY = "TRITON_LAB_DATABASE_URL"

# ---------------------------------------------------------------------------------------------
# A small kustomize: what these manifests use of it, exactly as kustomize does it.

# The associative lists of a pod spec and their merge keys (patchMergeKey in the Kubernetes API).
# Lists not named here are replaced whole by a patch, as kustomize does for them.
MERGE_KEYS = {"containers": "name", "initContainers": "name", "env": "name", "volumes": "name", "volumeMounts": "mountPath"}


def _merge(base, patch, field: str | None = None):
    if isinstance(patch, dict) and isinstance(base, dict):
        directives = [key for key in patch if key.startswith("$")]
        if directives:
            raise NotImplementedError(f"patch directive {directives} is not resolved by this test")
        merged = dict(base)
        for key, value in patch.items():
            merged[key] = _merge(base[key], value, key) if key in base else value
        return merged
    if isinstance(patch, list) and isinstance(base, list) and field == "ports" and patch:
        raise NotImplementedError("a patch on ports is not resolved by this test")
    if isinstance(patch, list) and isinstance(base, list) and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        by_key = {item[key]: item for item in base}
        # kustomize's order: the patch's items in its order, then the base's other items.
        merged = [_merge(by_key[item[key]], item) if item[key] in by_key else item for item in patch]
        return merged + [item for item in base if item[key] not in {p[key] for p in patch}]
    return patch


def load(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def kustomization(folder: Path) -> dict:
    return yaml.safe_load((folder / KUSTOMIZATION).read_text())


def _patch(docs: list[dict], folder: Path, k: dict) -> list[dict]:
    for entry in k.get("patches", []):
        if set(entry) != {"path"}:
            raise NotImplementedError(f"only strategic-merge patches from a file are resolved here: {entry}")
        (patch,) = load(folder / entry["path"])
        hits = [i for i, doc in enumerate(docs) if (doc["kind"], doc["metadata"]["name"]) == (patch["kind"], patch["metadata"]["name"])]
        assert len(hits) == 1, f"{folder.name}/{entry['path']} patches {len(hits)} resources"
        docs[hits[0]] = _merge(docs[hits[0]], patch)
    return docs


def _set_images(docs: list[dict], images: list[dict]) -> list[dict]:
    for doc in docs:
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            name, _, tag = c["image"].partition(":")
            for image in images:
                if image["name"] == name:
                    c["image"] = f"{image.get('newName', name)}:{image.get('newTag', tag)}"
    return docs


def build(folder: Path, components: tuple[Path, ...] = (), way_in: Path | None = None) -> list[dict]:
    """The documents `kustomize build folder` gives, with `components` added to its own and, if
    `way_in` is given, that component in place of the way in that the kustomization lists."""
    k = kustomization(folder)
    unknown = set(k) - {"apiVersion", "kind", "resources", "components", "patches", "images"}
    if unknown:
        raise NotImplementedError(f"{folder.name}/{KUSTOMIZATION}: {sorted(unknown)} are not resolved by this test")
    docs: list[dict] = []
    for entry in k.get("resources", []):
        path = (folder / entry).resolve()
        docs += build(path) if path.is_dir() else load(path)
    listed = [(folder / c).resolve() for c in k.get("components", [])]
    if way_in is not None:
        listed = [way_in if c.name in WAYS_IN else c for c in listed]
    for component in [*listed, *components]:
        assert kustomization(component)["kind"] == "Component"
        docs += [d for entry in kustomization(component).get("resources", []) for d in load(component / entry)]
        docs = _patch(docs, component, kustomization(component))
    docs = _patch(docs, folder, k)
    return _set_images(copy.deepcopy(docs), k.get("images", []))


# "shape" as it is, "shape+class-db" with the database component, "shape~way" with another way in.
BUILDS = (
    {shape: build(K8S / shape) for shape in SHAPES}
    | {f"{shape}+{CLASS_DB}": build(K8S / shape, (K8S / CLASS_DB,)) for shape in SHAPES}
    | {f"{shape}~{way}": build(K8S / shape, way_in=K8S / way) for shape in SHAPES for way in WAYS_IN if way != GATEWAY_API}
)


def shape_of(build_name: str) -> str:
    return re.split(r"[+~]", build_name)[0]


def way_in_of(build_name: str) -> str:
    return build_name.partition("~")[2] or GATEWAY_API


def builds_with(way: str) -> list[str]:
    return [b for b in BUILDS if way_in_of(b) == way]

# ---------------------------------------------------------------------------------------------
# Reading a build.


def documents(build_name: str) -> list[dict]:
    return BUILDS[build_name]


def of_kind(docs: list[dict], kind: str) -> list[dict]:
    return [doc for doc in docs if doc["kind"] == kind]


def named(docs: list[dict], kind: str, name: str) -> dict:
    matches = [doc for doc in of_kind(docs, kind) if doc["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one {kind} {name}, found {len(matches)}"
    return matches[0]


def pod_spec(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]


def containers(workload: dict) -> list[dict]:
    return pod_spec(workload)["containers"]


def container_of(workload: dict, name: str) -> dict:
    matches = [c for c in containers(workload) if c["name"] == name]
    assert len(matches) == 1, f"expected one container named {name}"
    return matches[0]


def app_deployments(docs: list[dict]) -> list[dict]:
    return [d for d in of_kind(docs, "Deployment") if any(c["name"] == "app" for c in containers(d))]


def the_app(docs: list[dict]) -> dict:
    (app,) = app_deployments(docs)
    return app


def triton_workload(docs: list[dict]) -> dict:
    """The Deployment whose pods run Triton: the app's own (triton-per-pod) or its own (shared-triton)."""
    (workload,) = [d for d in of_kind(docs, "Deployment") if any(c["name"] == "triton" for c in containers(d))]
    return workload


def env_of(c: dict) -> dict[str, dict]:
    return {e["name"]: e for e in c.get("env", [])}


def secret_value(docs: list[dict], name: str, key: str) -> str | None:
    matches = [d for d in of_kind(docs, "Secret") if d["metadata"]["name"] == name]
    if len(matches) != 1:
        return None
    return (matches[0].get("stringData") or {}).get(key)


def selects(service: dict, workload: dict) -> bool:
    labels = workload["spec"]["template"]["metadata"]["labels"]
    return service["spec"]["selector"].items() <= labels.items()


def service_target(docs: list[dict], host: str, port: int) -> tuple[dict, dict] | None:
    """The (workload, container port) that `host:port` reaches through the Service named `host`."""
    services = [s for s in of_kind(docs, "Service") if s["metadata"]["name"] == host]
    if len(services) != 1:
        return None
    (service,) = services
    ports = [p for p in service["spec"]["ports"] if p["port"] == port]
    if len(ports) != 1:
        return None
    target = ports[0].get("targetPort", port)
    for workload in of_kind(docs, "Deployment") + of_kind(docs, "StatefulSet"):
        if not selects(service, workload):
            continue
        for c in containers(workload):
            for p in c.get("ports", []):
                if target in (p["containerPort"], p.get("name")):
                    return workload, p
    return None


def validate(doc: dict) -> str:
    return kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


_GATEWAY_API_RESULTS: dict[str, dict] = {}


def gateway_api_check(docs: list[dict]) -> list[dict]:
    """For each Gateway API document, what the package's schema refuses ("errors") and the fields
    it does not have ("unknown"), as gateway_api.mjs reports them."""
    module = REPO / "node_modules" / GATEWAY_API_PACKAGE / "package.json"
    if shutil.which("node") is None or not module.exists():
        pytest.fail(f"the Gateway API schemas need node and {GATEWAY_API_PACKAGE}: run `npm ci` in the repository root (README's test command does)")
    keys = [json.dumps(doc, sort_keys=True) for doc in docs]
    missing = [key for key in dict.fromkeys(keys) if key not in _GATEWAY_API_RESULTS]
    if missing:
        done = subprocess.run(
            ["node", str(GATEWAY_API_CHECK)], input="[" + ",".join(missing) + "]", capture_output=True, text=True, timeout=60, cwd=REPO
        )
        assert done.returncode == 0, done.stderr
        _GATEWAY_API_RESULTS.update(zip(missing, json.loads(done.stdout), strict=True))
    return [_GATEWAY_API_RESULTS[key] for key in keys]


def gateway_api_problems(doc: dict) -> list[str]:
    (result,) = gateway_api_check([doc])
    return result["errors"] + [f"{path}: not a field of its schema" for path in result["unknown"]]


# ---------------------------------------------------------------------------------------------
# The checks that matter, as functions returning what is wrong: the tests run them on the real
# builds (nothing wrong) and on broken copies (the problem found).


def database_problems(docs: list[dict]) -> list[str]:
    """Every app Deployment with more than one replica reads a PostgreSQL URL from the Secret."""
    problems = []
    for app in app_deployments(docs):
        if app["spec"].get("replicas", 1) <= 1:
            continue
        env = env_of(container_of(app, "app")).get(DATABASE_KEY)
        ref = (env or {}).get("valueFrom", {}).get("secretKeyRef")
        if not ref:
            problems.append(f"{app['metadata']['name']}: {app['spec']['replicas']} replicas without {DATABASE_KEY} from a Secret")
            continue
        if ref.get("optional"):
            problems.append(f"{DATABASE_KEY} is optional: a pod without it keeps an SQLite file of its own")
        url = secret_value(docs, ref["name"], ref["key"])
        if url is None:
            problems.append(f"no Secret {ref['name']} with key {ref['key']} in the build")
        elif not urlsplit(url).scheme.startswith("postgresql"):
            problems.append(f"{DATABASE_KEY} is {url.split(':')[0]}, not PostgreSQL: the replicas would not share it")
    return problems


def shared_triton_problems(docs: list[dict]) -> list[str]:
    """The app's TRITON_URL, gRPC and metrics addresses reach the one Triton through its Service."""
    problems = []
    env = env_of(container_of(the_app(docs), "app"))
    expected = {"TRITON_URL": 8000, "TRITON_GRPC_URL": 8001, "TRITON_METRICS_URL": 8002}
    for name, container_port in expected.items():
        value = env.get(name, {}).get("value", "")
        address = urlsplit(value if "//" in value else f"//{value}")
        reached = service_target(docs, address.hostname or "", address.port or 0)
        if reached is None:
            problems.append(f"{name}={value} names no Service port in the build")
            continue
        workload, port = reached
        if port["containerPort"] != container_port or workload is not triton_workload(docs):
            problems.append(f"{name}={value} reaches {workload['metadata']['name']}:{port['containerPort']}, not Triton's {container_port}")
    return problems


def class_db_problems(docs: list[dict]) -> list[str]:
    """The URL the app reads names the StatefulSet's headless Service, its user, database and password."""
    problems = []
    (db,) = of_kind(docs, "StatefulSet")
    url = urlsplit(secret_value(docs, DATABASE_SECRET, DATABASE_KEY) or "")
    if url.hostname != db["spec"]["serviceName"]:
        problems.append(f"the URL's host {url.hostname} is not the StatefulSet's Service {db['spec']['serviceName']}")
    reached = service_target(docs, url.hostname or "", url.port or 0)
    if reached is None or reached[0] is not db or reached[1]["containerPort"] != 5432:
        problems.append(f"{url.hostname}:{url.port} does not reach PostgreSQL's port 5432")
    services = [s for s in of_kind(docs, "Service") if s["metadata"]["name"] == url.hostname]
    if services and services[0]["spec"].get("clusterIP") != "None":
        problems.append(f"Service {url.hostname} is not headless")
    env = env_of(container_of(db, "postgres"))
    if url.username != env["POSTGRES_USER"]["value"] or url.path.lstrip("/") != env["POSTGRES_DB"]["value"]:
        problems.append("the URL's user or database is not the one PostgreSQL creates")
    ref = env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]
    if url.password != secret_value(docs, ref["name"], ref["key"]):
        problems.append("the URL's password is not the one PostgreSQL starts with")
    return problems


# ---------------------------------------------------------------------------------------------
# Schemas and the files.


@pytest.mark.parametrize(
    "build_name,doc",
    [(b, doc) for b, docs in BUILDS.items() for doc in docs],
    ids=[f"{b}-{doc['kind']}-{doc['metadata']['name']}" for b, docs in BUILDS.items() for doc in docs],
)
def test_every_manifest_of_every_shape_validates_strictly_offline(build_name, doc):
    # The schemas ship inside the packages: no network is touched (the test machine has none
    # to offer anyway), and unknown fields are refused, not only wrong types.
    if doc["apiVersion"].partition("/")[0] == GATEWAY_API_GROUP:
        assert gateway_api_problems(doc) == []
    else:
        assert validate(doc) == "1.30"


def test_the_same_validation_rejects_a_broken_manifest():
    broken = copy.deepcopy(the_app(documents("shared-triton")))
    broken["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError) as err:
        validate(broken)
    assert list(err.value.path) == ["spec", "replicas"]


def test_strict_validation_rejects_a_misspelt_field():
    broken = copy.deepcopy(the_app(documents("triton-per-pod")))
    broken["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(broken)


def test_the_gateway_api_schemas_refuse_a_broken_route_and_gateway():
    docs = documents("shared-triton")
    route, gateway = named(docs, "HTTPRoute", "triton-batching-lab"), named(docs, "Gateway", "triton-batching-lab")
    wrong_type = copy.deepcopy(route)
    wrong_type["spec"]["rules"][0]["sessionPersistence"]["type"] = "Cookies"
    assert gateway_api_problems(wrong_type) == ['/spec/rules/0/sessionPersistence/type: enum {"allowedValues":["Cookie","Header"]}']
    misspelt = copy.deepcopy(route)
    misspelt["spec"]["rules"][0]["sessionPersistance"] = misspelt["spec"]["rules"][0].pop("sessionPersistence")
    assert gateway_api_problems(misspelt) == ["/spec/rules/0/sessionPersistance: not a field of its schema"]
    nested = copy.deepcopy(route)
    nested["spec"]["rules"][0]["backendRefs"][0]["weigth"] = 1
    assert gateway_api_problems(nested) == ["/spec/rules/0/backendRefs/0/weigth: not a field of its schema"]
    bad_timeout = copy.deepcopy(route)
    bad_timeout["spec"]["rules"][0]["timeouts"]["request"] = "1d"  # Gateway API durations stop at hours
    assert any(p.startswith("/spec/rules/0/timeouts/request: pattern") for p in gateway_api_problems(bad_timeout))
    no_protocol = copy.deepcopy(gateway)
    del no_protocol["spec"]["listeners"][0]["protocol"]
    assert any("required" in p and "protocol" in p for p in gateway_api_problems(no_protocol))
    unknown_kind = {**copy.deepcopy(route), "kind": "HTTPRoutes"}
    assert gateway_api_problems(unknown_kind) == [f"no Gateway API schema for {GATEWAY_API_GROUP}/v1 HTTPRoutes"]


@pytest.mark.parametrize("build_name", BUILDS)
def test_each_build_has_the_resources_its_shape_needs(build_name):
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in documents(build_name))
    expected = [
        ("Deployment", "triton-batching-lab"),
        ("Secret", DATABASE_SECRET),
        ("Secret", "triton-lab-instructor"),
        ("Service", "triton-batching-lab"),
    ]
    expected += {
        GATEWAY_API: [("Gateway", "triton-batching-lab"), ("HTTPRoute", "triton-batching-lab")],
        INGRESS_NGINX: [("Ingress", "triton-batching-lab")],
        CLIENT_IP: [],  # the Service itself
    }[way_in_of(build_name)]
    if build_name.startswith("shared-triton"):
        expected += [("Deployment", "triton-server"), ("Service", "triton-server")]
    if build_name.endswith(CLASS_DB):
        expected += [("Service", "class-db"), ("StatefulSet", "class-db")]
    assert kinds == sorted(expected)


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_kustomization_lists_every_file_of_its_folder_and_names_no_namespace(folder):
    k = kustomization(K8S / folder)
    assert k["kind"] == ("Component" if folder in COMPONENTS else "Kustomization")
    assert "namespace" not in k
    listed = [r for r in k.get("resources", []) if not r.startswith("..")] + [p["path"] for p in k.get("patches", [])]
    on_disk = sorted(p.name for p in (K8S / folder).glob("*.yaml") if p.name != KUSTOMIZATION)
    assert sorted(listed) == on_disk
    for path in on_disk:
        for doc in load(K8S / folder / path):
            assert "namespace" not in doc["metadata"], f"{folder}/{path}"


def test_the_folder_holds_the_base_the_two_shapes_and_the_components_only():
    assert sorted(p.name for p in K8S.iterdir()) == sorted(FOLDERS)
    for shape in SHAPES:
        k = kustomization(K8S / shape)
        assert "../base" in k["resources"]
        # One way in, the Gateway API by default; the database component is opt-in: the shape
        # names it only in a comment to uncomment, in its components list.
        assert k["components"] == [f"../{GATEWAY_API}"]
        assert re.search(r"^  # - \.\./class-db$", (K8S / shape / KUSTOMIZATION).read_text(), re.M)
        assert {i["name"] for i in k["images"]} == {APP_IMAGE}


def test_the_resolver_merges_lists_by_key_and_refuses_what_it_does_not_resolve():
    base = {"containers": [{"name": "app", "env": [{"name": "A", "value": "1"}]}]}
    patch = {"containers": [{"name": "app", "env": [{"name": "B", "value": "2"}]}, {"name": "triton"}]}
    merged = _merge(base, patch)
    assert [c["name"] for c in merged["containers"]] == ["app", "triton"]
    assert [e["name"] for e in merged["containers"][0]["env"]] == ["B", "A"]
    assert _merge({"args": ["a"]}, {"args": ["b"]}) == {"args": ["b"]}
    with pytest.raises(NotImplementedError):
        _merge({"env": []}, {"$patch": "delete"})
    with pytest.raises(NotImplementedError):
        _merge({"ports": [{"port": 80}]}, {"ports": [{"port": 81}]}, "spec")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (with kustomize) is not installed here")
@pytest.mark.parametrize("build_name", BUILDS)
def test_the_resolver_gives_what_kubectl_kustomize_gives(build_name, tmp_path):
    shape, component = shape_of(build_name), build_name.partition("+")[2]
    tree = tmp_path / "k8s"
    shutil.copytree(K8S, tree)
    if way_in_of(build_name) != GATEWAY_API:  # as an operator would: the other way in, in its place
        listed = tree / shape / KUSTOMIZATION
        listed.write_text(listed.read_text().replace(f"  - ../{GATEWAY_API}\n", f"  - ../{way_in_of(build_name)}\n"))
    overlay = tree / "overlay"
    overlay.mkdir()
    (overlay / KUSTOMIZATION).write_text(yaml.safe_dump({"resources": [f"../{shape}"], "components": [f"../{component}"] if component else []}))
    done = subprocess.run(["kubectl", "kustomize", str(overlay)], capture_output=True, text=True, check=True, timeout=60)

    def key(d):
        return d["kind"], d["metadata"]["name"]

    assert sorted(load_text(done.stdout), key=key) == sorted(documents(build_name), key=key)


def load_text(text: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(text) if doc is not None]


# ---------------------------------------------------------------------------------------------
# The class database.


@pytest.mark.parametrize("build_name", BUILDS)
def test_no_shape_with_more_than_one_replica_is_without_the_class_database(build_name):
    docs = documents(build_name)
    assert the_app(docs)["spec"]["replicas"] > 1  # both shapes serve a class past one pod
    assert database_problems(docs) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_the_database_check_finds_a_shape_without_it(shape):
    without = copy.deepcopy(documents(shape))
    app = container_of(the_app(without), "app")
    app["env"] = [e for e in app["env"] if e["name"] != DATABASE_KEY]
    assert database_problems(without) and "without TRITON_LAB_DATABASE_URL" in database_problems(without)[0]
    sqlite = copy.deepcopy(documents(shape))
    named(sqlite, "Secret", DATABASE_SECRET)["stringData"][DATABASE_KEY] = "sqlite:////data/progress.sqlite3"
    assert any("not PostgreSQL" in p for p in database_problems(sqlite))
    no_secret = [d for d in copy.deepcopy(documents(shape)) if d["metadata"]["name"] != DATABASE_SECRET]
    assert any("no Secret" in p for p in database_problems(no_secret))
    one = copy.deepcopy(documents(shape))
    the_app(one)["spec"]["replicas"] = 1
    container_of(the_app(one), "app")["env"] = []
    assert database_problems(one) == []  # one replica may keep an SQLite file


@pytest.mark.parametrize("shape", SHAPES)
def test_without_the_component_the_url_is_a_placeholder_that_reaches_nothing(shape):
    url = secret_value(documents(shape), DATABASE_SECRET, DATABASE_KEY)
    assert url.startswith("postgresql+psycopg://")
    assert urlsplit(url).hostname.endswith(".invalid")  # RFC 2606: never resolves
    assert "REPLACE_ME" in url
    text = (K8S / "base" / "class-database.yaml").read_text()
    assert "managed PostgreSQL" in text and "recommended" in text.lower()


@pytest.mark.parametrize("shape", SHAPES)
def test_with_the_component_the_url_names_the_statefulsets_service(shape):
    docs = documents(f"{shape}+{CLASS_DB}")
    assert class_db_problems(docs) == []
    moved = copy.deepcopy(docs)
    named(moved, "Service", "class-db")["metadata"]["name"] = "postgres"
    assert any("does not reach" in p for p in class_db_problems(moved))
    wrong_password = copy.deepcopy(docs)
    named(wrong_password, "Secret", DATABASE_SECRET)["stringData"]["POSTGRES_PASSWORD"] = "other"
    assert any("password" in p for p in class_db_problems(wrong_password))


def test_the_class_db_is_a_small_postgresql_with_its_own_volume():
    docs = documents(f"shared-triton+{CLASS_DB}")
    db = named(docs, "StatefulSet", "class-db")
    assert db["spec"]["replicas"] == 1
    pg = container_of(db, "postgres")
    assert pg["image"] == "postgres:15"
    assert pg["readinessProbe"]["exec"]["command"][0] == "pg_isready"
    assert {"cpu", "memory"} <= set(pg["resources"]["requests"])
    (claim,) = db["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in pg["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == "/var/lib/postgresql/data"
    assert env_of(pg)["PGDATA"]["value"].startswith("/var/lib/postgresql/data/")
    # The password comes from a Secret, and the placeholder one is refused at start.
    ref = env_of(pg)["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]
    placeholder = secret_value(docs, ref["name"], ref["key"])
    assert f'"$POSTGRES_PASSWORD" = {placeholder} ]' in " ".join(pg["command"])
    assert "exec docker-entrypoint.sh postgres" in " ".join(pg["command"])
    # Only the app reads the URL; only PostgreSQL reads the password.
    assert "POSTGRES_PASSWORD" not in env_of(container_of(the_app(docs), "app"))


# ---------------------------------------------------------------------------------------------
# Triton, per shape.


@pytest.mark.parametrize("build_name", BUILDS)
def test_triton_is_the_official_2_51_image_with_one_gpu(build_name):
    triton = container_of(triton_workload(documents(build_name)), "triton")
    assert triton["image"] == TRITON_IMAGE
    assert str(triton["resources"]["limits"]["nvidia.com/gpu"]) == "1"
    command = " ".join(triton["command"])
    assert "tritonserver --model-repository=/models" in command
    # The lab's Apply button loads deployments with load_model: explicit model control.
    assert "--model-control-mode=explicit" in command
    assert "--load-model='*'" in command  # quoted: bash -c must not glob it
    # The Python backend's models need torch, which the official image lacks.
    assert re.search(r"pip install .*torch", command)
    probe = triton["readinessProbe"]["httpGet"]
    assert (probe["path"], probe["port"]) == ("/v2/health/ready", 8000)
    mounts = {m["name"]: m["mountPath"] for m in triton["volumeMounts"]}
    assert mounts["models"] == "/models" and mounts["shm"] == "/dev/shm"


@pytest.mark.parametrize("build_name", BUILDS)
def test_only_triton_asks_for_a_gpu(build_name):
    for workload in of_kind(documents(build_name), "Deployment") + of_kind(documents(build_name), "StatefulSet"):
        spec = pod_spec(workload)
        for c in spec["containers"] + spec.get("initContainers", []):
            if c["name"] != "triton":
                assert "nvidia.com/gpu" not in c.get("resources", {}).get("limits", {}), c["name"]


@pytest.mark.parametrize("build_name", BUILDS)
def test_the_init_container_copies_the_model_repository_from_the_app_image(build_name):
    docs = documents(build_name)
    spec = pod_spec(triton_workload(docs))
    (init,) = spec["initContainers"]
    assert init["image"] == container_of(the_app(docs), "app")["image"]
    command = " ".join(init["command"])
    assert re.search(r"cp -R /srv/lab/model_repository/\. /models/?", command)
    mounts = {m["name"]: m["mountPath"] for m in init["volumeMounts"]}
    assert mounts["models"] == "/models"
    assert "emptyDir" in next(v for v in spec["volumes"] if v["name"] == "models")


@pytest.mark.parametrize("build_name", BUILDS)
def test_the_runs_and_stubs_are_sized_for_the_triton_not_the_node(build_name):
    # Both defaults read the node (os.cpu_count, the machine's memory), never the pod's limits.
    docs = documents(build_name)
    env = env_of(container_of(the_app(docs), "app"))
    triton = container_of(triton_workload(docs), "triton")
    memory_gib = int(triton["resources"]["limits"]["memory"].removesuffix("Gi"))
    expected_stubs = max(4, int((memory_gib - loaded_models.RESERVED_GB) / loaded_models.STUB_GB))
    assert int(env["TRITON_LAB_MAX_STUBS"]["value"]) == expected_stubs
    assert 1 <= int(env["TRITON_LAB_PARALLEL_RUNS"]["value"]) <= int(triton["resources"]["requests"]["cpu"])


@pytest.mark.parametrize("build_name", [b for b in BUILDS if b.startswith("triton-per-pod")])
def test_per_pod_the_app_talks_to_its_own_pods_triton_by_the_pods_address(build_name):
    app_deployment = the_app(documents(build_name))
    assert triton_workload(documents(build_name)) is app_deployment
    app = container_of(app_deployment, "app")
    names = [e["name"] for e in app["env"]]
    env = env_of(app)
    # The pod's own address: unique per pod, where the class database keeps leases per server
    # address (127.0.0.1 would name every pod's Triton alike), and defined before its uses.
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert env["TRITON_URL"]["value"] == "$(POD_IP):8000"
    assert env["TRITON_GRPC_URL"]["value"] == "$(POD_IP):8001"
    assert env["TRITON_METRICS_URL"]["value"].startswith("http://$(POD_IP):8002/")
    assert names.index("POD_IP") < min(names.index(n) for n in ("TRITON_URL", "TRITON_GRPC_URL", "TRITON_METRICS_URL"))
    # Every port the app uses is one the pod's Triton listens on.
    triton_ports = {p["containerPort"] for p in container_of(app_deployment, "triton")["ports"]}
    assert {8000, 8001, 8002} <= triton_ports
    # Deployments the app loads go to the GPU its own container cannot see.
    assert env["TRITON_LAB_INSTANCE_KIND"]["value"] == "KIND_GPU"


@pytest.mark.parametrize("build_name", [b for b in BUILDS if b.startswith("triton-per-pod")])
def test_per_pod_the_app_reads_the_trace_and_log_files_triton_writes(build_name):
    workload = the_app(documents(build_name))
    app_env = env_of(container_of(workload, "app"))
    command = " ".join(container_of(workload, "triton")["command"])
    trace_dir = app_env["TRITON_TRACE_DIR"]["value"]
    assert f"--trace-config=triton,file={trace_dir}/trace.json" in command
    assert f"--log-file={app_env['TRITON_LOG_FILE']['value']}" in command
    for name in ("app", "triton"):
        mounts = {m["name"]: m["mountPath"] for m in container_of(workload, name)["volumeMounts"]}
        assert mounts["traces"] == trace_dir, name
    assert "emptyDir" in next(v for v in pod_spec(workload)["volumes"] if v["name"] == "traces")


@pytest.mark.parametrize("build_name", [b for b in BUILDS if b.startswith("shared-triton")])
def test_shared_the_app_reaches_the_one_triton_through_its_service(build_name):
    docs = documents(build_name)
    assert shared_triton_problems(docs) == []
    app = the_app(docs)
    assert [c["name"] for c in containers(app)] == ["app"]  # cheap replicas: no Triton, no GPU
    assert "initContainers" not in pod_spec(app)
    assert env_of(container_of(app, "app"))["TRITON_LAB_INSTANCE_KIND"]["value"] == "KIND_GPU"
    # One Triton, never two behind the Service, not even for a moment during a rollout.
    triton = triton_workload(docs)
    assert triton["metadata"]["name"] == "triton-server"
    assert triton["spec"]["replicas"] == 1 and triton["spec"]["strategy"]["type"] == "Recreate"


@pytest.mark.parametrize("build_name", [b for b in BUILDS if b.startswith("shared-triton")])
def test_the_shared_triton_check_finds_a_url_that_misses_the_service(build_name):
    docs = copy.deepcopy(documents(build_name))
    env = env_of(container_of(the_app(docs), "app"))
    env["TRITON_URL"]["value"] = "triton:8000"
    env["TRITON_GRPC_URL"]["value"] = "triton-server:8000"
    problems = shared_triton_problems(docs)
    assert any(p.startswith("TRITON_URL=triton:8000 names no Service") for p in problems)
    assert any(p.startswith("TRITON_GRPC_URL=triton-server:8000 reaches triton-server:8000, not Triton's 8001") for p in problems)


@pytest.mark.parametrize("build_name", [b for b in BUILDS if b.startswith("shared-triton")])
def test_shared_no_trace_or_log_file_that_the_app_could_not_read(build_name):
    docs = documents(build_name)
    env = env_of(container_of(the_app(docs), "app"))
    assert "TRITON_TRACE_DIR" not in env and "TRITON_LOG_FILE" not in env
    command = " ".join(container_of(triton_workload(docs), "triton")["command"])
    assert "--trace-config" not in command and "--log-file" not in command


# ---------------------------------------------------------------------------------------------
# The app, the way in (a gateway, an ingress or the Service itself) and the Service, in every shape.


@pytest.mark.parametrize("build_name", BUILDS)
def test_streamlit_listens_for_the_ingress(build_name):
    app = container_of(the_app(documents(build_name)), "app")
    command = app["command"]
    assert command[:3] == ["streamlit", "run", "app/main.py"]
    assert "--server.address=0.0.0.0" in command
    port = next(p for p in app["ports"] if p["name"] == "http")["containerPort"]
    assert f"--server.port={port}" in command
    assert app["readinessProbe"]["httpGet"]["path"] == "/_stcore/health"


@pytest.mark.parametrize("build_name", BUILDS)
def test_the_instructor_key_is_referenced_but_not_required(build_name):
    docs = documents(build_name)
    ref = env_of(container_of(the_app(docs), "app"))["TRITON_LAB_INSTRUCTOR_KEY"]["valueFrom"]["secretKeyRef"]
    assert ref["optional"] is True
    assert named(docs, "Secret", ref["name"])


def session_persistence_problems(route: dict) -> list[str]:
    """Every rule of the HTTPRoute pins a browser to one pod by a cookie sent with every request of
    the site, and the two rules its CRD checks in CEL (x-kubernetes-validations, which the npm
    package's schemas do not carry; Gateway API v1.5.1 and v1.6.1 alike) hold."""
    problems = []
    for i, rule in enumerate(route["spec"]["rules"]):
        persistence = rule.get("sessionPersistence")
        if persistence is None:
            problems.append(f"rule {i} has no sessionPersistence: the gateway spreads a learner's requests over the replicas")
            continue
        kind = persistence.get("type", "Cookie")  # the CRD's default
        if kind != "Cookie":
            problems.append(f"rule {i} persists sessions by {kind}, which a browser does not send by itself")
        cookie = persistence.get("cookieConfig")
        if cookie is not None and kind != "Cookie":
            problems.append(f"rule {i}: cookieConfig can only be set with type Cookie")
        if (cookie or {}).get("lifetimeType") == "Permanent" and "absoluteTimeout" not in persistence:
            problems.append(f"rule {i}: AbsoluteTimeout must be specified when cookie lifetimeType is Permanent")
        paths = [match.get("path", {"type": "PathPrefix", "value": "/"}) for match in rule.get("matches", [{}])]
        if any((path.get("type", "PathPrefix"), path.get("value", "/")) != ("PathPrefix", "/") for path in paths):
            problems.append(f"rule {i} matches {paths}, not the whole site: the cookie would not come back with every request")
    return problems


def attachment_problems(docs: list[dict]) -> list[str]:
    """The HTTPRoute attaches to the Gateway in the build: each parentRef names it, in the route's
    own namespace, and a listener of it takes HTTP routes for the route's host names from there."""
    (route,) = of_kind(docs, "HTTPRoute")
    problems = []
    for ref in route["spec"]["parentRefs"]:
        if (ref.get("group", GATEWAY_API_GROUP), ref.get("kind", "Gateway")) != (GATEWAY_API_GROUP, "Gateway") or "namespace" in ref:
            problems.append(f"parentRef {ref} is not a Gateway of this namespace")
            continue
        gateways = [g for g in of_kind(docs, "Gateway") if g["metadata"]["name"] == ref["name"]]
        if not gateways:
            problems.append(f"parentRef {ref['name']} names no Gateway in the build")
            continue
        listeners = [item for item in gateways[0]["spec"]["listeners"] if ref.get("sectionName", item["name"]) == item["name"]]
        fits = [
            item
            for item in listeners
            if item["protocol"] in ("HTTP", "HTTPS")
            and item.get("allowedRoutes", {}).get("namespaces", {}).get("from", "Same") in ("Same", "All")
            and ("hostname" not in item or item["hostname"] in route["spec"].get("hostnames", [item["hostname"]]))
        ]
        if not fits:
            problems.append(f"no listener of Gateway {ref['name']} takes this route for {route['spec'].get('hostnames')}")
    return problems


@pytest.mark.parametrize("build_name", builds_with(GATEWAY_API))
def test_the_route_pins_a_learner_to_one_pod_by_cookie(build_name):
    route = named(documents(build_name), "HTTPRoute", "triton-batching-lab")
    assert session_persistence_problems(route) == []
    (rule,) = route["spec"]["rules"]
    persistence = rule["sessionPersistence"]
    assert persistence["type"] == "Cookie" and persistence["sessionName"]
    assert persistence["cookieConfig"]["lifetimeType"] == "Session"  # Core support, unlike Permanent
    # Streamlit's websocket stays open for the whole visit: no request timeout at all.
    assert rule["timeouts"] == {"request": "0s"}


def test_the_cookie_check_finds_a_route_that_would_not_pin():
    route = named(documents("triton-per-pod"), "HTTPRoute", "triton-batching-lab")
    without = copy.deepcopy(route)
    del without["spec"]["rules"][0]["sessionPersistence"]
    assert "has no sessionPersistence" in session_persistence_problems(without)[0]
    header = copy.deepcopy(route)
    header["spec"]["rules"][0]["sessionPersistence"]["type"] = "Header"
    assert any("by Header" in p for p in session_persistence_problems(header))
    assert any("only be set with type Cookie" in p for p in session_persistence_problems(header))
    permanent = copy.deepcopy(route)
    permanent["spec"]["rules"][0]["sessionPersistence"]["cookieConfig"]["lifetimeType"] = "Permanent"
    assert any("AbsoluteTimeout must be specified" in p for p in session_persistence_problems(permanent))
    permanent["spec"]["rules"][0]["sessionPersistence"]["absoluteTimeout"] = "12h"
    assert session_persistence_problems(permanent) == [] and gateway_api_problems(permanent) == []
    narrow = copy.deepcopy(route)
    narrow["spec"]["rules"][0]["matches"][0]["path"]["value"] = "/lab"
    assert any("not the whole site" in p for p in session_persistence_problems(narrow))


@pytest.mark.parametrize("build_name", builds_with(GATEWAY_API))
def test_the_route_attaches_to_the_gateway_in_the_build(build_name):
    docs = documents(build_name)
    assert attachment_problems(docs) == []
    (gateway,) = of_kind(docs, "Gateway")
    assert gateway["spec"]["gatewayClassName"]
    moved = copy.deepcopy(docs)
    named(moved, "HTTPRoute", "triton-batching-lab")["spec"]["parentRefs"][0]["name"] = "eg"
    assert attachment_problems(moved) == ["parentRef eg names no Gateway in the build"]
    other_host = copy.deepcopy(docs)
    named(other_host, "HTTPRoute", "triton-batching-lab")["spec"]["hostnames"] = ["lab.example.com"]
    assert any("no listener" in p for p in attachment_problems(other_host))


@pytest.mark.parametrize("build_name", builds_with(INGRESS_NGINX))
def test_the_ingress_pins_a_learner_to_one_pod_by_cookie(build_name):
    (ingress,) = of_kind(documents(build_name), "Ingress")
    notes = ingress["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert notes[prefix + "affinity"] == "cookie"
    assert notes[prefix + "affinity-mode"] == "persistent"
    assert notes[prefix + "session-cookie-name"]
    # Streamlit's websocket stays open for the whole visit: far past nginx's 60 s default.
    assert int(notes[prefix + "proxy-read-timeout"]) >= 3600
    assert int(notes[prefix + "proxy-send-timeout"]) >= 3600
    assert ingress["spec"]["ingressClassName"] == "nginx"


@pytest.mark.parametrize("build_name", BUILDS)
def test_only_the_fallback_pins_learners_by_the_services_client_ip(build_name):
    spec = named(documents(build_name), "Service", "triton-batching-lab")["spec"]
    if way_in_of(build_name) != CLIENT_IP:
        # A gateway or ingress routes to the pods themselves: its cookie decides, not the Service.
        assert "sessionAffinity" not in spec and spec.get("type", "ClusterIP") == "ClusterIP"
        return
    assert spec["type"] == "LoadBalancer"
    assert spec["sessionAffinity"] == "ClientIP"
    assert spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] >= 3600
    # Without it kube-proxy may see a node's address in place of the learner's.
    assert spec["externalTrafficPolicy"] == "Local"


@pytest.mark.parametrize("build_name", BUILDS)
def test_the_way_in_reaches_the_app_pods_only_through_the_service(build_name):
    docs = documents(build_name)
    service = named(docs, "Service", "triton-batching-lab")
    app = the_app(docs)
    assert selects(service, app)
    # Not the Triton pods nor PostgreSQL: the learners' traffic goes to Streamlit only.
    others = [w for w in of_kind(docs, "Deployment") + of_kind(docs, "StatefulSet") if w is not app]
    assert not [w["metadata"]["name"] for w in others if selects(service, w)]
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= {p["name"] for p in container_of(app, "app")["ports"]}
    way = way_in_of(build_name)
    if way == INGRESS_NGINX:
        (ingress,) = of_kind(docs, "Ingress")
        backends = [path["backend"]["service"] for rule in ingress["spec"]["rules"] for path in rule["http"]["paths"]]
        assert backends and all(b["name"] == service["metadata"]["name"] for b in backends)
        assert all(b["port"]["name"] in {p["name"] for p in service["spec"]["ports"]} for b in backends)
    elif way == GATEWAY_API:
        (route,) = of_kind(docs, "HTTPRoute")
        refs = [ref for rule in route["spec"]["rules"] for ref in rule["backendRefs"]]
        assert refs and all((ref.get("group", ""), ref.get("kind", "Service")) == ("", "Service") for ref in refs)
        assert all(ref["name"] == service["metadata"]["name"] and "namespace" not in ref for ref in refs)
        assert all(ref["port"] in {p["port"] for p in service["spec"]["ports"]} for ref in refs)
    else:
        assert of_kind(docs, "Ingress") == of_kind(docs, "HTTPRoute") == []


def test_the_readme_names_the_channel_and_the_pinned_schemas():
    text = (REPO / "deploy" / "README.md").read_text()
    pinned = json.loads((REPO / "package.json").read_text())["devDependencies"][GATEWAY_API_PACKAGE]
    assert f"`{GATEWAY_API_PACKAGE}` {pinned}" in text
    assert "experimental channel" in text
    for folder in WAYS_IN:
        assert f"`k8s/{folder}/`" in text, folder


@pytest.mark.parametrize("build_name", BUILDS)
def test_every_workload_runs_the_image_the_shape_sets(build_name):
    docs = documents(build_name)
    (image,) = kustomization(K8S / shape_of(build_name))["images"]
    app_images = {
        c["image"]
        for w in of_kind(docs, "Deployment")
        for c in containers(w) + pod_spec(w).get("initContainers", [])
        if c["image"].partition(":")[0] == APP_IMAGE
    }
    assert app_images == {f"{APP_IMAGE}:{image['newTag']}"}


# ---------------------------------------------------------------------------------------------
# The image.


def test_the_image_holds_every_model_folder():
    lines = [line.split() for line in DOCKERFILE.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert lines[0][:2] == ["FROM", "python:3.11-slim"]
    workdir = next(line[1] for line in lines if line[0] == "WORKDIR")
    copies = {(line[1], line[2]) for line in lines if line[0] == "COPY"}
    # The whole folder, so every model under it (now and later) is in the image ...
    assert ("model_repository", "./model_repository") in copies
    assert workdir == "/srv/lab"
    assert any(line[:3] == ["RUN", "pip", "install"] and line[-1] == "." for line in lines)
    # ... unless an ignore file keeps part of it out of the build context.
    models = sorted(p.parent for p in (REPO / "model_repository").glob("*/config.pbtxt"))
    assert {m.name for m in models} >= {"asr_dynamic", "asr_sequence_direct", "asr_sequence_oldest", "sentiment"}
    ignored = [
        line.strip().rstrip("/")
        for ignore in (REPO / ".dockerignore", DOCKERFILE.with_name("Dockerfile.dockerignore"))
        if ignore.exists()
        for line in ignore.read_text().splitlines()
        if line.strip() and not line.startswith("#") and not line.startswith("!")
    ]
    for model in models:
        for path in [model, *model.rglob("*")]:
            if "__pycache__" in path.parts:
                continue
            relative = path.relative_to(REPO).as_posix()
            hits = [pattern for pattern in ignored if fnmatch.fnmatch(relative, pattern) or relative.startswith(pattern + "/")]
            assert not hits, f"{relative} is left out of the image by {hits}"


def test_the_image_runs_the_copy_next_to_its_data():
    text = DOCKERFILE.read_text()
    for folder in ("lessons", "quiz", "app"):
        assert re.search(rf"^COPY {folder} \./{folder}$", text, re.M), folder
    assert re.search(r"^ENV PYTHONPATH=/srv/lab\b", text, re.M)
