import pathlib

from files import ignored


def test_gitignore_patterns():
    paths = ["a.log", "src/x.py", "build/out.o", "docs/build/keep.md"]
    assert ignored(paths, ["*.log", "/build/"]) == ["a.log", "build/out.o"]


def test_dependency_is_declared():
    text = pathlib.Path(__file__).parent.parent.joinpath("requirements.txt").read_text()
    assert "pathspec" in text
