from tui_engineer.cli.main import program

program()
