import csv
import io


def to_lines(rows):
    return [" ".join(str(v) for v in row.values()) for row in rows]


def to_csv(rows):
    if not rows:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
