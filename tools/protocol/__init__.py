"""``make protocol``: the generator of the protocol's mirrors, from ``pi_lsp/protocol.py``.

``schema.py`` turns protocol.py into JSON Schema; ``typescript.py`` (through the maintained
json-schema-to-typescript), ``lua.py`` and ``markdown.py`` turn the schema into the VS Code
extension's types, the Neovim plugin's LuaCATS annotations and the tables of
``docs/protocol.md``; ``generate.py`` writes them, or checks them (``make protocol-check``).
A development tool: not part of the installed package.
"""
