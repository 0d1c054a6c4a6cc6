"""Importing any module of ``pi_lsp.llm`` must not import litellm: it takes seconds to load."""

from __future__ import annotations

import subprocess
import sys

_SCRIPT = """
import importlib, pkgutil, sys
import pi_lsp.llm
names = [info.name for info in pkgutil.iter_modules(pi_lsp.llm.__path__, "pi_lsp.llm.")]
for name in names:
    importlib.import_module(name)
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.models import context_window_for, list_known_models
list_known_models("openai/")
context_window_for(ModelConfig(model="openai/gpt-4o", provider="openai", model_id="gpt-4o"))
leaked = sorted(name for name in sys.modules if name.split(".")[0] in ("litellm", "openai"))
print(len(names), leaked)
"""


def test_importing_every_llm_module_leaves_litellm_unimported() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=True, timeout=60
    )
    module_count, leaked = result.stdout.strip().split(" ", 1)
    assert int(module_count) >= 10
    assert leaked == "[]"
