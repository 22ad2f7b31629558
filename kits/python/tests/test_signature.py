"""Factuarea-Signature: the shared vectors, signing, and each refusal."""

from __future__ import annotations

import unittest
from datetime import datetime, timezone

from factuarea_webhooks import (
    ConfigError,
    InvalidSignature,
    MissingHeader,
    NoMatch,
    NoSignature,
    NoTimestamp,
    TimestampOutOfTolerance,
    new_secret,
    sign,
    standard_compatible,
    verify,
)
from factuarea_webhooks.signature import parse

from .support import load_vectors

NOW = 1790590562


class VectorsTest(unittest.TestCase):
    def test_verify(self) -> None:
        for v in load_vectors("signature-vectors.json"):
            with self.subTest(v["name"]):
                try:
                    verify(v["header"], v["body"].encode("utf-8"), [v["secret"]], v["timestamp"])
                    got = True
                except InvalidSignature as exc:
                    got, err = False, exc
                self.assertEqual(got, v["valid"], "verify: got valid=%s (%s), want %s" % (got, "" if got else err, v["valid"]))

    def test_verify_takes_datetime_clock(self) -> None:
        v = load_vectors("signature-vectors.json")[0]
        verify(v["header"], v["body"].encode("utf-8"), v["secret"], datetime.fromtimestamp(v["timestamp"], timezone.utc))

    def test_sign(self) -> None:
        """For every valid vector, sign's v1 for its secret is one of the header's."""
        for v in load_vectors("signature-vectors.json"):
            if not v["valid"]:
                continue
            with self.subTest(v["name"]):
                t = parse(v["header"]).timestamp
                got = sign(t, v["body"].encode("utf-8"), v["secret"])
                ts, sig = got.split(",", 1)
                self.assertEqual(ts, "t=%d" % t)
                self.assertIn(sig, v["header"].split(","), "sign: got %r, not in the header %r" % (got, v["header"]))


class VerifyTest(unittest.TestCase):
    body = b"{}"
    good = sign(NOW, b"{}", "whsec_a")

    def test_rotation(self) -> None:
        body = b'{"id":"x"}'
        header = sign(NOW, body, "whsec_new", "whsec_old")
        self.assertEqual(len(parse(header).v1), 2)
        for secret in ("whsec_new", "whsec_old"):
            verify(header, body, secret, NOW)
        verify(header, body, ["whsec_other", "whsec_old"], NOW)
        with self.assertRaises(NoMatch):
            verify(header, body, "whsec_other", NOW)

    def test_errors(self) -> None:
        hexsig = "ab" * 32
        cases = [
            ("empty", "", NOW, MissingHeader),
            ("blank", "  ", NOW, MissingHeader),
            ("no timestamp", "v1=" + hexsig, NOW, NoTimestamp),
            ("two timestamps", "t=1,t=2," + self.good.split(",", 1)[1], NOW, NoTimestamp),
            ("negative timestamp", "t=-5,v1=" + hexsig, NOW, NoTimestamp),
            ("zero timestamp", "t=0,v1=" + hexsig, NOW, NoTimestamp),
            ("timestamp beyond int64", "t=9223372036854775808,v1=" + hexsig, NOW, NoTimestamp),
            # int() would take these; the sender never writes them.
            ("underscores", "t=1_790_590_562,v1=" + hexsig, NOW, NoTimestamp),
            ("non-ASCII digits", "t=\u0661\u0667\u0669\u0660,v1=" + hexsig, NOW, NoTimestamp),
            ("space in timestamp", "t= 1790590562,v1=" + hexsig, NOW, NoTimestamp),
            ("no v1", "t=1790590562,v0=abc", NOW, NoSignature),
            # bytes.fromhex would take spaces inside the hex.
            ("space in hex", "t=1790590562,v1=" + "ab " * 31 + "ab", NOW, NoSignature),
            ("short v1", "t=1790590562,v1=abcd", NOW, NoSignature),
            ("stale", self.good, NOW + 301, TimestampOutOfTolerance),
            ("future", self.good, NOW - 301, TimestampOutOfTolerance),
            ("wrong body", sign(NOW, b'{"a":1}', "whsec_a"), NOW, NoMatch),
        ]
        for name, header, now, want in cases:
            with self.subTest(name):
                with self.assertRaises(want) as cm:
                    verify(header, self.body, "whsec_a", now)
                self.assertIsInstance(cm.exception, InvalidSignature)

    def test_tolerance_edges(self) -> None:
        verify(self.good, self.body, "whsec_a", NOW + 300)
        verify(self.good, self.body, "whsec_a", NOW - 300)
        # A clock between seconds rounds down, as the sender's does.
        verify(self.good, self.body, "whsec_a", NOW + 300.9)

    def test_uppercase_hex(self) -> None:
        t, v1 = self.good.split(",")
        verify(t + "," + v1.upper().replace("V1=", "v1="), self.body, "whsec_a", NOW)

    def test_no_secret(self) -> None:
        for secrets in ([], [""], [None]):
            with self.subTest(secrets):
                with self.assertRaises(ConfigError):
                    verify(self.good, self.body, secrets, NOW)  # type: ignore[arg-type]

    def test_new_secret(self) -> None:
        a, b = new_secret(), new_secret()
        self.assertNotEqual(a, b)
        self.assertTrue(a.startswith("whsec_"))
        self.assertEqual(len(a), len("whsec_") + 44, "got %r, want whsec_ and 44 characters of padded base64" % a)
        self.assertTrue(standard_compatible(a), "a new secret must serve Standard Webhooks too")


if __name__ == "__main__":
    unittest.main()
