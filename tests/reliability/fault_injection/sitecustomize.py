"""Fault injection for a pi-lsp server under test, loaded through ``PYTHONPATH``.

While the file named by ``PI_LSP_FAULT_FLAG`` exists, every ``os.write`` to a file under
``PI_LSP_FAULT_DIR`` writes half of its bytes and then fails with ENOSPC, as a disk that fills up
in the middle of a write does. Nothing else in the process is touched.
"""

import errno
import os

_directory = os.environ.get("PI_LSP_FAULT_DIR")
_flag = os.environ.get("PI_LSP_FAULT_FLAG")

if _directory and _flag:
    _real_write = os.write

    def _write(descriptor, data):
        if os.path.exists(_flag):
            try:
                target = os.readlink(f"/proc/self/fd/{descriptor}")
            except OSError:
                target = ""
            if target.startswith(_directory):
                half = len(data) // 2
                if half:
                    _real_write(descriptor, bytes(memoryview(data)[:half]))
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return _real_write(descriptor, data)

    os.write = _write
