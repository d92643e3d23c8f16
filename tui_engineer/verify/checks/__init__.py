"""The project's own checks beside its tests (commit hooks so far): found from what the project
declares, run on a step's content in the sandbox, their refusals read as findings."""
