"""Deployments: settings, their config.pbtxt, loading them within the class's budget.

Callers outside this package import from here: names, and the module `deployments` as a namespace whose
functions read with its name, `deployments.to_pbtxt(config)` / `deployments.read_config(name)`.
The recogniser lab's settings and traffic, each declared once (range, URL key, problem code), are
setup_table.FIELDS; its presets and its URL set-up are app/recogniser/engine/presets.py and setup.py.
`diff_lines` and its kin (config_diff.py) say what changes from one config to another.
"""
from app.lab.deployment import deployments
from app.lab.deployment.config_diff import DiffLine, changed_lines, config_lines, diff_lines
from app.lab.deployment.deployer import Applied, Deployer, setup_model_name
from app.lab.deployment.deployments import GENERATOR_DEPLOYMENTS, PAGED_ENGINE_DEPLOYMENTS, SHIPPED, DeploymentError, LabSettings, scheduler_of
from app.lab.deployment.device import instance_kind
from app.lab.deployment.loaded_models import DeploymentCost, LoadedModels, MemoryReport, Unloaded
from app.lab.deployment.query import values_from_query
from app.lab.deployment.setup_table import FIELD, FIELDS, PARTS, SCHEDULERS, STATE_KEYS, Field, field_problems
from app.lab.deployment.shared_models import SharedLoadedModels

__all__ = [
    "FIELD",
    "FIELDS",
    "GENERATOR_DEPLOYMENTS",
    "PAGED_ENGINE_DEPLOYMENTS",
    "PARTS",
    "SCHEDULERS",
    "SHIPPED",
    "STATE_KEYS",
    "Applied",
    "Deployer",
    "DeploymentCost",
    "DeploymentError",
    "DiffLine",
    "Field",
    "LabSettings",
    "LoadedModels",
    "MemoryReport",
    "SharedLoadedModels",
    "Unloaded",
    "changed_lines",
    "config_lines",
    "deployments",
    "diff_lines",
    "field_problems",
    "instance_kind",
    "scheduler_of",
    "setup_model_name",
    "values_from_query",
]
