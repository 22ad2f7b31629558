"""Receiver's arguments: each mistake is a ConfigError that names it."""

from __future__ import annotations

import json
import os
import sqlite3
import unittest
from typing import Any, Dict

from factuarea_webhooks import ConfigError, Dialect, Receiver, WebhookError, errors

from .support import HERE, SECRET, SQLiteDatabase, quiet_logger


class ConfigTest(unittest.TestCase):
    def setUp(self) -> None:
        self.db = SQLiteDatabase()
        self.addCleanup(self.db.close)

    def args(self, **kwargs: Any) -> Dict[str, Any]:
        a: Dict[str, Any] = dict(secrets=[SECRET], connect=self.db.connect, handler=lambda c, e: None, logger=quiet_logger())
        a.update(kwargs)
        return a

    def test_valid(self) -> None:
        self.assertEqual(Receiver(**self.args()).scheme, "any")
        self.assertEqual(Receiver(**self.args(secrets=SECRET, scheme="standard", dialect=Dialect.SQLITE)).scheme, "standard")

    def test_errors(self) -> None:
        conn = sqlite3.connect(":memory:")
        self.addCleanup(conn.close)
        cases = [
            ("no secret", dict(secrets=[]), "secrets"),
            ("empty secret", dict(secrets=[SECRET, ""]), "secrets"),
            ("secret not a string", dict(secrets=[42]), "secrets"),
            ("no handler", dict(handler=None), "handler"),
            ("neither connect nor pool", dict(connect=None), "exactly one of connect"),
            ("both connect and pool", dict(pool=object()), "exactly one of connect"),
            # The guide's defect: one global connection shared by threads
            # shares one transaction between concurrent deliveries.
            ("a connection instead of a factory", dict(connect=conn), "not a connection"),
            ("a pool without connection()", dict(connect=None, pool=object()), "pool"),
            ("unknown scheme", dict(scheme="svix"), "scheme"),
            ("standard scheme without a compatible secret", dict(secrets=["whsec_AAECAwQ"], scheme="standard"), "standard base64"),
            ("dialect a string", dict(dialect="sqlite"), "dialect"),
            ("max_body_bytes zero", dict(max_body_bytes=0), "max_body_bytes"),
            ("max_body_bytes a string", dict(max_body_bytes="1MB"), "max_body_bytes"),
            ("now not callable", dict(now=0), "now"),
        ]
        for name, kwargs, in_message in cases:
            with self.subTest(name):
                with self.assertRaises(ConfigError) as cm:
                    Receiver(**self.args(**kwargs))
                self.assertIn(in_message, str(cm.exception))

    def test_standard_secrets(self) -> None:
        # The shared cases (SPEC 15): with scheme "standard", every secret
        # is checked, and the first that is not standard base64 after
        # whsec_ is refused with the message every kit gives.
        with open(os.path.join(HERE, "testdata", "standard-secrets.json"), encoding="utf-8") as f:
            shared = json.load(f)
        self.assertTrue(shared["cases"])
        for case in shared["cases"]:
            with self.subTest(case["name"]):
                args = self.args(secrets=case["secrets"], scheme="standard")
                if case["refused"] is None:
                    self.assertEqual(Receiver(**args).scheme, "standard")
                    continue
                with self.assertRaises(ConfigError) as cm:
                    Receiver(**args)
                self.assertEqual(str(cm.exception), shared["message"].replace("{index}", str(case["refused"])))

    def test_one_base_class(self) -> None:
        for name in dir(errors):
            obj = getattr(errors, name)
            if isinstance(obj, type) and issubclass(obj, Exception) and obj.__module__ == errors.__name__:
                self.assertTrue(issubclass(obj, WebhookError), name)


if __name__ == "__main__":
    unittest.main()
