def to_lines(rows):
    return [" ".join(str(v) for v in row.values()) for row in rows]
