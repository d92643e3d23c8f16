import argparse

ITEMS = ["buy milk", "write report", "call mum"]


def build_parser():
    parser = argparse.ArgumentParser(prog="todo")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="show the items")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "list":
        for number, item in enumerate(ITEMS, 1):
            print(f"{number}. {item}")
    return 0
