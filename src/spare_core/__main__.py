"""``python -m spare_core`` is the ``spare`` command."""
from spare_core.cli import main

raise SystemExit(main())
