import re
import unicodedata


def shout(text):
    return text.upper() + "!"


def slugify(title):
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words)
