from todo.cli import main


def test_list_numbers_items(capsys):
    assert main(["list"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "1. buy milk"


def test_list_json(capsys):
    import json

    assert main(["list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0] == "buy milk"
