"""YAML text to Python values, one way for every file the course reads (lessons' front matter,
the glossary, the quiz bank and its translations).

PyYAML's own parser is pure Python: the quiz bank alone took about 0.6 s to parse on two cores,
and pages, the command line and every test process parse these files again and again. libyaml's
parser (PyYAML's CSafeLoader) reads the same safe subset with the same resolvers and
constructors, about ten times faster; a PyYAML built without libyaml falls back to SafeLoader.
Errors are yaml.YAMLError either way."""
from __future__ import annotations

from typing import Any

import yaml

_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse(text: str) -> Any:
    """The value of one YAML document, built with safe constructors only."""
    return yaml.load(text, Loader=_LOADER)
