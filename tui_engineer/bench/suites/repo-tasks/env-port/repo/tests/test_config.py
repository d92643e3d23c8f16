from config import load_port


def test_default_port(monkeypatch):
    monkeypatch.delenv("APP_PORT", raising=False)
    assert load_port() == 8000
