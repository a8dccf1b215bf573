"""The types the checker's engine shares between its modules: a tensor as numpy holds it, a reply,
a table's row and a verdict's values (JSON is the lab's: app/lab/json_value.py).

A tensor's dtype is known only at run time (the model's metadata says it), so an Array is an
array of any numpy scalar type.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient

Array: TypeAlias = npt.NDArray[np.generic]
Arrays: TypeAlias = dict[str, Array]  # one request's (or reply's) tensors by name


# The two dicts whose keys are not fixed, so no TypedDict says them. A Row is one request's row of
# a check's table (measurement.COLUMNS, a diff./gold. column per compared output, and what the
# judge and the replay add); Values are a verdict's values (the report's checks[].values, their
# keys by check: report.py's docstring). Their cells go to pandas or to JSON, and the words read
# them by key, so Any: pandas' own cells are Any to mypy (pyproject.toml).
Row: TypeAlias = dict[str, Any]
Values: TypeAlias = dict[str, Any]

# A reply as tritonclient gives it, HTTP or gRPC: InferResult (.as_numpy, and over gRPC
# .get_response). tritonclient ships no types, so mypy reads these as Any anyway.
InferResult: TypeAlias = "httpclient.InferResult | grpcclient.InferResult"
