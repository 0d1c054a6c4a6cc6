"""How bytes reach the language server, and what happens when the client that sent them goes.

Every path ends in the same place: frames read by ``framing.serve_messages`` (or by pygls's own
reader) and handed to one ``PiLanguageServer`` of ``server.py``, whose protocol answers JSON that is
no JSON-RPC message with Invalid Request (``invalid_request``). The paths differ in where the
bytes come from:

- **stdio on the event loop** (``stdio``): the default when an editor starts ``pi-lsp`` with
  pipes or a socket as stdin; header lines resynchronise after a frame of the wrong length
  (``framing``).
- **stdio on pygls's thread** (``stdio``, through ``client_gone.WatchedInput``): when stdin is a
  file or a terminal (which must not be made non-blocking) and on Windows.
- **TCP** (``tcp``, ``pi-lsp --tcp HOST:PORT``): loopback only unless ``--allow-remote``, and a
  connection must present the secret token written at start before pygls sees a byte of it.
- **the shared server** (opt-in: ``pi-lsp --shared`` or ``PI_LSP_SHARED=1``):
  ``shared_forwarder`` is what a later start runs (standard library only, so it starts in tens of
  milliseconds): it connects its stdio to the per-user socket ``shared_address`` names, starting
  the server if needed; ``shared_daemon`` (``pi-lsp --serve-shared``) serves each connection as a
  language server of its own. See docs/performance.md ("The shared server").

Whatever the path, a client that goes without ``shutdown`` (its stream ends, or the editor process
named in ``initialize`` dies) gets its turns aborted and saved and its sessions closed
(``client_gone``). This package's ``__init__`` imports nothing: the forwarder must start without
pygls.
"""
