def shout(text):
    return text.upper() + "!"


def slugify(title):
    return title.lower().replace(" ", "-")
