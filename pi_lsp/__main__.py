"""``python -m pi_lsp``: the same as the ``pi-lsp`` command."""

from pi_lsp.cli import main

raise SystemExit(main())
