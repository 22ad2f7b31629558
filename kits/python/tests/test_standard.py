"""Standard Webhooks (SPEC section 15): the shared vectors, signing, and each refusal."""

from __future__ import annotations

import unittest

from factuarea_webhooks import (
    ConfigError,
    InvalidSignature,
    MissingHeader,
    NoMatch,
    NoSignature,
    NoTimestamp,
    SecretNotStandard,
    TimestampOutOfTolerance,
    sign_standard,
    standard_compatible,
    standard_key,
    verify,
    verify_standard,
)

from .support import OTHER_SECRET, SECRET, load_vectors

NOW = 1790590562
ID = "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"


class VectorsTest(unittest.TestCase):
    def test_verify(self) -> None:
        for v in load_vectors("standard-webhooks-vectors.json"):
            with self.subTest(v["name"]):
                body = v["body"].encode("utf-8")
                try:
                    verify_standard(v["id"], str(v["timestamp"]), v["signature"], body, v["secrets"], v["now"])
                    got = True
                except InvalidSignature as exc:
                    got, err = False, exc
                self.assertEqual(got, v["valid"], "got valid=%s (%s), want %s" % (got, "" if got else repr(err), v["valid"]))

    def test_one_secret_serves_both_schemes(self) -> None:
        """Where a vector gives factuarea_signature, the same secret verifies it too."""
        seen = 0
        for v in load_vectors("standard-webhooks-vectors.json"):
            if "factuarea_signature" not in v:
                continue
            seen += 1
            with self.subTest(v["name"]):
                verify(v["factuarea_signature"], v["body"].encode("utf-8"), v["secrets"], v["now"])
        self.assertGreater(seen, 0, "no vector has a factuarea_signature")

    def test_sign(self) -> None:
        """For every valid vector, sign_standard's entry for its secret is one of the header's."""
        for v in load_vectors("standard-webhooks-vectors.json"):
            if not v["valid"]:
                continue
            with self.subTest(v["name"]):
                got = sign_standard(v["id"], v["timestamp"], v["body"].encode("utf-8"), *v["secrets"])
                self.assertIn(got, v["signature"].split(" "), "got %r, not in %r" % (got, v["signature"]))

    def test_rotation_order(self) -> None:
        got = sign_standard(ID, NOW, b"{}", OTHER_SECRET, SECRET)
        entries = got.split(" ")
        self.assertEqual(entries, [sign_standard(ID, NOW, b"{}", OTHER_SECRET), sign_standard(ID, NOW, b"{}", SECRET)])


class VerifyStandardTest(unittest.TestCase):
    body = b"{}"
    good = sign_standard(ID, NOW, b"{}", SECRET)

    def test_errors(self) -> None:
        cases = [
            ("no signature header", ID, str(NOW), "", NOW, MissingHeader),
            ("no id", "", str(NOW), self.good, NOW, MissingHeader),
            ("no timestamp", ID, "", self.good, NOW, NoTimestamp),
            ("timestamp not a number", ID, "abc", self.good, NOW, NoTimestamp),
            ("timestamp with underscores", ID, "1_790_590_562", self.good, NOW, NoTimestamp),
            ("negative timestamp", ID, "-5", self.good, NOW, NoTimestamp),
            ("only v2", ID, str(NOW), self.good.replace("v1,", "v2,"), NOW, NoSignature),
            ("not base64", ID, str(NOW), "v1,!!!!", NOW, NoSignature),
            ("unpadded base64", ID, str(NOW), self.good.rstrip("="), NOW, NoSignature),
            ("stale", ID, str(NOW), self.good, NOW + 301, TimestampOutOfTolerance),
            ("future", ID, str(NOW), self.good, NOW - 301, TimestampOutOfTolerance),
            ("another id", ID[:-1] + "2", str(NOW), self.good, NOW, NoMatch),
        ]
        for name, msg_id, ts, sig, now, want in cases:
            with self.subTest(name):
                with self.assertRaises(want):
                    verify_standard(msg_id, ts, sig, self.body, SECRET, now)

    def test_timestamp_with_spaces(self) -> None:
        verify_standard(ID, " %d " % NOW, self.good, self.body, SECRET, NOW)

    def test_unknown_entries_ignored(self) -> None:
        verify_standard(ID, str(NOW), "v2,abc " + self.good + " v1a,xyz", self.body, SECRET, NOW)

    def test_old_secret_format(self) -> None:
        """A secret in the earlier unpadded base64url format signs Factuarea-Signature only."""
        old = load_vectors("signature-vectors.json")[3]["secret"]
        self.assertFalse(standard_compatible(old))
        with self.assertRaises(SecretNotStandard):
            standard_key(old)
        with self.assertRaises(SecretNotStandard):
            verify_standard(ID, str(NOW), self.good, self.body, old, NOW)
        with self.assertRaises(SecretNotStandard):
            sign_standard(ID, NOW, self.body, old)
        # With a compatible secret beside it, the compatible one is used.
        verify_standard(ID, str(NOW), self.good, self.body, [old, SECRET], NOW)

    def test_standard_key(self) -> None:
        self.assertEqual(standard_key(SECRET), bytes(range(32)))
        for bad in ("whsec_", "AAECAw==", "whsec_AAECAw", "whsec_AAECAx==", "whsec_AA ECAw==", "whsec_AAECAw==\n"):
            with self.subTest(bad):
                self.assertFalse(standard_compatible(bad), "%r: got compatible, want not" % bad)

    def test_no_secret(self) -> None:
        with self.assertRaises(ConfigError):
            verify_standard(ID, str(NOW), self.good, self.body, [], NOW)


if __name__ == "__main__":
    unittest.main()
