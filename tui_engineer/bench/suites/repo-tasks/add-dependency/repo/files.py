def listing(paths):
    return sorted(paths)
