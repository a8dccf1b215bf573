from tests.views.conftest import data_dir, open_page  # noqa: F401  (the pages open the same way here)
