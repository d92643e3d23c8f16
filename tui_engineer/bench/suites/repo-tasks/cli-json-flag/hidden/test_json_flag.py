import json

from todo.cli import ITEMS, main


def test_list_json_prints_the_items_as_a_json_array(capsys):
    assert main(["list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == ITEMS


def test_plain_list_is_unchanged(capsys):
    main(["list"])
    assert capsys.readouterr().out.splitlines()[1] == "2. write report"
