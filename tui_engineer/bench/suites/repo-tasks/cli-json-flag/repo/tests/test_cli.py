from todo.cli import main


def test_list_numbers_items(capsys):
    assert main(["list"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "1. buy milk"
