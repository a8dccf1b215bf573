import pytest

from tests.views.conftest import data_dir, open_page  # noqa: F401  (the pages open the same way here)


@pytest.fixture(scope="session")
def pseudo_locales(tmp_path_factory):
    """A folder for TRITON_LAB_LOCALES holding the pseudo-locale's pack, built once a session."""
    from tests.i18n.pseudo import build_pack

    return build_pack(tmp_path_factory.mktemp("locales"))
