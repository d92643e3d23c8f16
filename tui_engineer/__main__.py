from tui_engineer.cli import main

raise SystemExit(main())
