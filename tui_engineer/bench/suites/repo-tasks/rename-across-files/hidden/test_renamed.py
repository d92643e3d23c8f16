import pathlib

import app.api
import app.users


def test_new_name_works_and_old_is_gone():
    assert app.users.get_user(1) == "ada"
    assert not hasattr(app.users, "get_usr")
    assert app.api.handle(2)["name"] == "linus"


def test_no_file_mentions_the_old_name():
    root = pathlib.Path(app.users.__file__).parent.parent
    for path in root.rglob("*.py"):
        if "bench_hidden" not in path.parts:
            assert "get_usr" not in path.read_text(), path
