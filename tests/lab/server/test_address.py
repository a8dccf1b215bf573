"""Server addresses are read one way wherever they come from (app/lab/server/address.py): host:port
or http://host:port; a value that cannot be used is refused when it is read, naming its source,
in the user's language. Pure: no server."""
from __future__ import annotations

import subprocess
import sys

import pytest

from app.checker.page import servers as check_servers
from app.i18n import languages, words
from app.lab.server import AddressError, LabServer, address
from app.text import problems as problems_text

FORMS = ["127.0.0.1:8000", "http://127.0.0.1:8000", "http://127.0.0.1:8000/", " HTTP://127.0.0.1:8000 "]
NOT_ADDRESSES = ["127.0.0.1", "https://127.0.0.1:8000", "127.0.0.1:0", "127.0.0.1:70000", "a b:1", "http://", "127.0.0.1:8000/v2", ""]


@pytest.mark.parametrize("text", FORMS)
def test_every_form_reads_as_host_port_for_every_kind_of_address(text):
    assert address.host_port(text, "--url") == "127.0.0.1:8000"
    assert address.host_port(text, "--grpc-url", kind="grpc") == "127.0.0.1:8000"
    assert address.metrics_url(text, "TRITON_METRICS_URL") == "http://127.0.0.1:8000/metrics"
    assert check_servers.normalise(text) == "127.0.0.1:8000"


def test_a_metrics_url_keeps_its_path_and_a_grpc_url_its_scheme_is_dropped():
    assert address.metrics_url("http://h:8002/metrics", "TRITON_METRICS_URL") == "http://h:8002/metrics"
    assert address.metrics_url("h:9000/custom/", "TRITON_METRICS_URL") == "http://h:9000/custom"
    assert address.host_port("grpc://h:8001", "TRITON_GRPC_URL", kind="grpc") == "h:8001"
    assert address.host_port("[::1]:8000", "--replica") == "[::1]:8000"


@pytest.mark.parametrize("text", NOT_ADDRESSES)
def test_what_is_no_address_is_refused_naming_its_source(text):
    with pytest.raises(AddressError) as err:
        address.host_port(text, "--replica")
    assert (err.value.code, err.value.values) == ("address_bad", {"source": "--replica", "value": text})
    assert check_servers.normalise(text) is None


def test_the_metrics_variable_as_host_port_is_read_as_its_url_when_the_server_is_made():
    """TRITON_METRICS_URL=127.0.0.1:PORT used to reach urllib as is ("unknown url type")."""
    env = {"TRITON_URL": "127.0.0.1:8000", "TRITON_METRICS_URL": "127.0.0.1:8002", "TRITON_GRPC_URL": "http://127.0.0.1:8001"}
    with pytest.MonkeyPatch.context() as patch:
        for k, v in env.items():
            patch.setenv(k, v)
        server = LabServer.from_env()
        assert (server.url, server.grpc_url, server.metrics_url) == ("127.0.0.1:8000", "127.0.0.1:8001", "http://127.0.0.1:8002/metrics")


@pytest.mark.parametrize("name", ["TRITON_URL", "TRITON_GRPC_URL", "TRITON_METRICS_URL"])
def test_a_variable_that_is_no_address_is_refused_when_the_server_is_made_naming_it(name):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(name, "triton-host")
        with pytest.raises(AddressError) as err:
            LabServer.from_env()
    assert err.value.values == {"source": name, "value": "triton-host"}
    for lang in languages():
        said = problems_text.error(err.value, words(lang))
        assert name in said and "triton-host" in said


@pytest.mark.parametrize(("flag", "lang", "said"), [
    ("--url", "en", "--url is 'nope', which is not a server address"),
    ("--replica", "en", "--replica is 'nope', which is not a server address"),
    ("--grpc-url", "zh", "--grpc-url 的值是 'nope'，这不是服务器地址"),
])
def test_the_cli_refuses_an_address_flag_before_any_server_is_asked(flag, lang, said):
    args = ["--url", "127.0.0.1:1"] if flag != "--url" else []
    done = subprocess.run([sys.executable, "-m", "app.cli", "check", "--model", "m", flag, "nope", *args, "--lang", lang],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and said in done.stderr, done.stderr
