"""Run records: every session's events as JSON lines in `.tui-engineer/runs/`, and replay."""

from tui_engineer.records.recorder import Recorder, runs_dir
from tui_engineer.records.replay import ReplayModel

__all__ = ["Recorder", "ReplayModel", "runs_dir"]
