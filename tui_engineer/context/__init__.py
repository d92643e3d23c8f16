"""What the model sees of the repository: a file listing and the contents of relevant files."""

from tui_engineer.context.files import file_contents, list_repo_files

__all__ = ["file_contents", "list_repo_files"]
