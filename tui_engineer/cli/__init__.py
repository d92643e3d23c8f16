"""The command line: `tui-engineer` and its subcommands (main.py), their parsers (arguments.py),
opening the app (launch.py), `serve` and its browser tabs (web.py, web_tab.py), `doctor`
(doctor.py) and `bench` (bench.py). The top of the layers: it may import every front end, and
nothing imports it (tests/test_import_hygiene.py). Empty, so a browser tab (`python -m
tui_engineer.cli.web_tab`) loads only what it uses."""
