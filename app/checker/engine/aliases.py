"""The types the checker's engine shares between its modules: a tensor as numpy holds it, a
JSON value as a report or an --input-data document holds it.

A tensor's dtype is known only at run time (the model's metadata says it), so an Array is an
array of any numpy scalar type. JSON's containers are the read-only protocols, so a list of ints
or a dict of strings is a JSON value as it stands, without a copy.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

Array: TypeAlias = npt.NDArray[np.generic]
Arrays: TypeAlias = dict[str, Array]  # one request's (or reply's) tensors by name

JSON: TypeAlias = str | int | float | bool | None | Sequence["JSON"] | Mapping[str, "JSON"]
JSONObject: TypeAlias = dict[str, JSON]  # what a to_json() returns
