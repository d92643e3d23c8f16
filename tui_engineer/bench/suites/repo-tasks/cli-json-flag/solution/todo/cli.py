import argparse
import json

ITEMS = ["buy milk", "write report", "call mum"]


def build_parser():
    parser = argparse.ArgumentParser(prog="todo")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="show the items")
    listing.add_argument("--json", action="store_true", help="print the items as a JSON array")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "list":
        if args.json:
            print(json.dumps(ITEMS))
            return 0
        for number, item in enumerate(ITEMS, 1):
            print(f"{number}. {item}")
    return 0
