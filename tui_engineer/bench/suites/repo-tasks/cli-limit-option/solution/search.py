import argparse

WORDS = ["apple", "apricot", "banana", "blueberry", "avocado"]


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(prog="search")
    parser.add_argument("prefix")
    parser.add_argument("--limit", type=positive, default=None)
    args = parser.parse_args(argv)
    matches = [word for word in WORDS if word.startswith(args.prefix)]
    for word in matches[: args.limit]:
        print(word)
    return 0
