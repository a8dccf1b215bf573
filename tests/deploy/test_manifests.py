"""The Kubernetes manifests in deploy/k8s: schema-valid for a fixed Kubernetes release, and
shaped the way the lab needs (one GPU Triton per pod, the app talking to its own Triton,
cookie affinity at the ingress, the model repository reaching Triton).

These are validated offline (kubernetes-validate ships the schemas); nothing is applied to a
cluster here. No Triton is needed.
"""
from __future__ import annotations

import copy
import fnmatch
import re
from pathlib import Path

import kubernetes_validate  # in the test extras: a missing package fails here, never skips
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy" / "k8s"
DOCKERFILE = REPO / "deploy" / "Dockerfile"
KUBERNETES_VERSION = "1.30.0"
TRITON_IMAGE = "nvcr.io/nvidia/tritonserver:24.10-py3"
KUSTOMIZATION = "kustomization.yaml"


def manifest_files() -> list[Path]:
    return sorted(p for p in K8S.glob("*.yaml") if p.name != KUSTOMIZATION)


def documents() -> list[tuple[str, dict]]:
    found = []
    for path in manifest_files():
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                found.append((path.name, doc))
    return found


def validate(doc: dict) -> str:
    return kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def only(kind: str) -> dict:
    matches = [doc for _, doc in documents() if doc["kind"] == kind]
    assert len(matches) == 1, f"expected one {kind}, found {len(matches)}"
    return matches[0]


def pod_spec() -> dict:
    return only("Deployment")["spec"]["template"]["spec"]


def container(name: str) -> dict:
    matches = [c for c in pod_spec()["containers"] if c["name"] == name]
    assert len(matches) == 1, f"expected one container named {name}"
    return matches[0]


def env_of(c: dict) -> dict[str, dict]:
    return {e["name"]: e for e in c.get("env", [])}


def test_there_are_manifests_of_every_kind_the_design_needs():
    kinds = sorted(doc["kind"] for _, doc in documents())
    assert kinds == ["Deployment", "Ingress", "Secret", "Service"]


@pytest.mark.parametrize("name,doc", documents(), ids=lambda v: v if isinstance(v, str) else v.get("kind"))
def test_every_manifest_validates_strictly_offline(name, doc):
    # The schemas ship inside the package: no network is touched (the test machine has none
    # to offer anyway), and strict mode rejects unknown fields, not only wrong types.
    assert validate(doc) == "1.30"


def test_the_same_validation_rejects_a_broken_manifest():
    broken = copy.deepcopy(only("Deployment"))
    broken["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError) as err:
        validate(broken)
    assert list(err.value.path) == ["spec", "replicas"]


def test_strict_validation_rejects_a_misspelt_field():
    broken = copy.deepcopy(only("Deployment"))
    broken["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(broken)


def test_manifests_name_no_namespace():
    for name, doc in documents():
        assert "namespace" not in doc["metadata"], name


def test_triton_is_the_official_2_51_image_with_one_gpu():
    triton = container("triton")
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
    assert mounts["models"] == "/models"


def test_only_triton_asks_for_a_gpu():
    others = [c for c in pod_spec()["containers"] + pod_spec()["initContainers"] if c["name"] != "triton"]
    for c in others:
        assert "nvidia.com/gpu" not in c.get("resources", {}).get("limits", {}), c["name"]


def test_the_app_talks_to_its_own_pods_triton():
    env = env_of(container("app"))
    assert env["TRITON_URL"]["value"] == "127.0.0.1:8000"
    assert env["TRITON_GRPC_URL"]["value"] == "127.0.0.1:8001"
    assert env["TRITON_METRICS_URL"]["value"].startswith("http://127.0.0.1:8002/")
    # Every port the app uses is one the pod's Triton listens on.
    triton_ports = {p["containerPort"] for p in container("triton")["ports"]}
    assert {8000, 8001, 8002} <= triton_ports
    # Deployments the app loads go to the GPU its own container cannot see.
    assert env["TRITON_LAB_INSTANCE_KIND"]["value"] == "KIND_GPU"


def test_the_app_reads_the_trace_and_log_files_triton_writes():
    app_env = env_of(container("app"))
    command = " ".join(container("triton")["command"])
    trace_dir = app_env["TRITON_TRACE_DIR"]["value"]
    assert f"--trace-config=triton,file={trace_dir}/trace.json" in command
    assert f"--log-file={app_env['TRITON_LOG_FILE']['value']}" in command
    for name in ("app", "triton"):
        mounts = {m["name"]: m["mountPath"] for m in container(name)["volumeMounts"]}
        assert mounts["traces"] == trace_dir, name


def test_streamlit_listens_for_the_ingress():
    app = container("app")
    command = app["command"]
    assert command[:3] == ["streamlit", "run", "app/main.py"]
    assert "--server.address=0.0.0.0" in command
    port = next(p for p in app["ports"] if p["name"] == "http")["containerPort"]
    assert f"--server.port={port}" in command
    assert app["readinessProbe"]["httpGet"]["path"] == "/_stcore/health"


def test_the_instructor_key_is_referenced_but_not_required():
    ref = env_of(container("app"))["TRITON_LAB_INSTRUCTOR_KEY"]["valueFrom"]["secretKeyRef"]
    assert ref["optional"] is True
    assert ref["name"] == only("Secret")["metadata"]["name"]


def test_the_ingress_pins_a_learner_to_one_pod_by_cookie():
    ingress = only("Ingress")
    notes = ingress["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert notes[prefix + "affinity"] == "cookie"
    assert notes[prefix + "affinity-mode"] == "persistent"
    assert notes[prefix + "session-cookie-name"]
    # Streamlit's websocket stays open for the whole visit: far past nginx's 60 s default.
    assert int(notes[prefix + "proxy-read-timeout"]) >= 3600
    assert int(notes[prefix + "proxy-send-timeout"]) >= 3600
    assert ingress["spec"]["ingressClassName"] == "nginx"


def test_the_ingress_reaches_the_app_through_the_service():
    service = only("Service")
    selector = service["spec"]["selector"]
    labels = only("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= labels.items()
    backends = [
        path["backend"]["service"]
        for rule in only("Ingress")["spec"]["rules"]
        for path in rule["http"]["paths"]
    ]
    assert backends and all(b["name"] == service["metadata"]["name"] for b in backends)
    port_names = {p["name"] for p in service["spec"]["ports"]}
    assert all(b["port"]["name"] in port_names for b in backends)
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= {p["name"] for p in container("app")["ports"]}


def test_the_init_container_copies_the_model_repository_from_the_app_image():
    (init,) = pod_spec()["initContainers"]
    assert init["image"] == container("app")["image"]
    command = " ".join(init["command"])
    assert re.search(r"cp -R /srv/lab/model_repository/\. /models/?", command)
    mounts = {m["name"]: m["mountPath"] for m in init["volumeMounts"]}
    assert mounts["models"] == "/models"
    assert "emptyDir" in next(v for v in pod_spec()["volumes"] if v["name"] == "models")


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


def test_the_kustomization_lists_every_manifest():
    kustomization = yaml.safe_load((K8S / KUSTOMIZATION).read_text())
    assert kustomization["kind"] == "Kustomization"
    assert "namespace" not in kustomization
    assert sorted(kustomization["resources"]) == [p.name for p in manifest_files()]
