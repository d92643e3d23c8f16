"""What the model sees of the repository: a map of its files and symbols (tree-sitter, cached by
content hash), ranked for the request and the step, and the files that matter, whole when small,
else by the regions that matter, packed to a budget.

The small public API other layers use:
- `gather_context(root, request, ...)`: the map and contents for a prompt.
- `region(root, path, start, end)`: lines of a file, as a `Region` (`.render()` for the prompt).
- `symbol_region(root, name, path=None)`: the lines of a class or function, found by the map.
- `frame_regions(root, report, budget_chars)`: the code around a test report's traceback frames.
- `build_map(root)`: the repository map itself.
"""

from tui_engineer.context.files import list_repo_files
from tui_engineer.context.packing import Context, frame_regions, gather_context
from tui_engineer.context.regions import Region, region, symbol_region
from tui_engineer.context.repomap import RepoMap, build_map

__all__ = [
    "Context",
    "Region",
    "RepoMap",
    "build_map",
    "frame_regions",
    "gather_context",
    "list_repo_files",
    "region",
    "symbol_region",
]
