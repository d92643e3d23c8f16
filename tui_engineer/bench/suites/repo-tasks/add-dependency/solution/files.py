import pathspec


def listing(paths):
    return sorted(paths)


def ignored(paths, patterns):
    spec = pathspec.PathSpec.from_lines("gitwildmatch", patterns)
    return [p for p in paths if spec.match_file(p)]
