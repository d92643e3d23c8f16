import pytest

from search import main


def test_limit(capsys):
    main(["a", "--limit", "2"])
    assert capsys.readouterr().out.split() == ["apple", "apricot"]


def test_no_limit(capsys):
    main(["a"])
    assert len(capsys.readouterr().out.split()) == 3


@pytest.mark.parametrize("bad", ["0", "-1"])
def test_bad_limit(bad):
    with pytest.raises(SystemExit):
        main(["a", "--limit", bad])
