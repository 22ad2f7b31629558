"""The kit imports nothing beyond the standard library, and declares no dependency."""

from __future__ import annotations

import ast
import os
import re
import unittest

from .support import KIT

# Every module the kit may import. A database driver is not among them: the
# kit works on the connection it is given.
STDLIB = {
    "__future__", "base64", "binascii", "contextlib", "dataclasses", "datetime", "enum", "hashlib", "hmac",
    "http", "json", "logging", "math", "re", "secrets", "sqlite3", "sys", "time", "typing",
}


class DepsTest(unittest.TestCase):
    def test_imports(self) -> None:
        src = os.path.join(KIT, "src", "factuarea_webhooks")
        files = [f for f in os.listdir(src) if f.endswith(".py")]
        self.assertGreater(len(files), 5)
        for name in files:
            with open(os.path.join(src, name), encoding="utf-8") as f:
                tree = ast.parse(f.read(), name)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    modules = [node.module or ""]
                else:
                    continue
                for m in modules:
                    with self.subTest(file=name, module=m):
                        self.assertIn(m.split(".")[0], STDLIB, "%s imports %s" % (name, m))

    def test_no_runtime_dependency(self) -> None:
        with open(os.path.join(KIT, "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
        self.assertRegex(text, r"(?m)^dependencies = \[\]$")
        self.assertRegex(text, r'(?m)^requires-python = ">=3\.9"$')
        self.assertIsNotNone(re.search(r'(?m)^name = "factuarea-webhooks"$', text))


if __name__ == "__main__":
    unittest.main()
