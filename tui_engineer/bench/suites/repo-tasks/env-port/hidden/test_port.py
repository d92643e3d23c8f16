import pytest

from config import load_port


def test_env_port(monkeypatch):
    monkeypatch.setenv("APP_PORT", "9001")
    assert load_port() == 9001


@pytest.mark.parametrize("bad", ["abc", "0", "70000"])
def test_bad_port(monkeypatch, bad):
    monkeypatch.setenv("APP_PORT", bad)
    with pytest.raises(ValueError, match="APP_PORT"):
        load_port()
