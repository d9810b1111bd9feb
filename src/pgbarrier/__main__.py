from pgbarrier.cli import main

raise SystemExit(main())
