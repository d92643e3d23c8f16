from app.api import handle
from app.users import get_user


def test_handle():
    assert handle(1) == {"status": 200, "name": "ada"}
    assert handle(9) == {"status": 404}


def test_get_user():
    assert get_user(2) == "linus"
