import argparse

WORDS = ["apple", "apricot", "banana", "blueberry", "avocado"]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="search")
    parser.add_argument("prefix")
    args = parser.parse_args(argv)
    for word in WORDS:
        if word.startswith(args.prefix):
            print(word)
    return 0
