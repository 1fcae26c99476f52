"""Moved to tests/doubles/scripted_model.py; this re-export goes once no test imports it from here."""

from tests.doubles.scripted_model import *  # noqa: F403
from tests.doubles.scripted_model import ScriptedModelServer, scripted, solver, submit  # noqa: F401
