from search import main


def test_prefix(capsys):
    main(["ap"])
    assert capsys.readouterr().out.split() == ["apple", "apricot"]
