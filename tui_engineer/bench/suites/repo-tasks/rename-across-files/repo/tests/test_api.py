from app.api import handle
from app.users import get_usr


def test_handle():
    assert handle(1) == {"status": 200, "name": "ada"}
    assert handle(9) == {"status": 404}


def test_get_usr():
    assert get_usr(2) == "linus"
