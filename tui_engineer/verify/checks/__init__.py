"""The project's own checks beside its tests: its git pre-commit hook (commit_hook.py), and the
linters, type checkers and formatters it declares (declared.py finds them, findings.py judges
their output against the starting commit's), run on a step's content in the sandbox."""
