"""The shared server: later ``pi-lsp`` starts connect to one server process instead of starting
their own (opt-in: ``pi-lsp --shared`` or ``PI_LSP_SHARED=1``).

``address`` names the per-user socket and checks its safety, ``forwarder`` is what a ``pi-lsp
--shared`` start runs (standard library only, so it starts in tens of milliseconds), ``daemon``
serves each connection as a client of its own. See docs/performance.md ("The shared server").
"""
