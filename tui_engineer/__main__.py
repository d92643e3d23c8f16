from tui_engineer.cli import program

program()
