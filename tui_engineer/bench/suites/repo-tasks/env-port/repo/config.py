def load_port():
    return 8000
