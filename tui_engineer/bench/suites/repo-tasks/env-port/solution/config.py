import os


def load_port():
    raw = os.environ.get("APP_PORT", "8000")
    try:
        port = int(raw)
    except ValueError:
        raise ValueError(f"APP_PORT must be a number, got {raw!r}") from None
    if not 1 <= port <= 65535:
        raise ValueError(f"APP_PORT must be between 1 and 65535, got {port}")
    return port
