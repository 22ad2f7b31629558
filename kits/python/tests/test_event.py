"""parse_event and read_headers."""

from __future__ import annotations

import unittest
from datetime import datetime, timezone

from factuarea_webhooks import Account, Headers, InvalidEvent, parse_event, read_headers

from .support import ACCOUNT_ENVELOPE, event_body

ID = "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"


class ParseEventTest(unittest.TestCase):
    def test_company_envelope(self) -> None:
        body = event_body(ID)
        ev = parse_event(body)
        self.assertEqual(ev.id, ID)
        self.assertEqual(ev.type, "invoice.sent")
        self.assertEqual(ev.api_version, "2026-09-23")
        self.assertEqual(ev.created, datetime(2026, 9, 28, 10, 16, 1, tzinfo=timezone.utc))
        self.assertTrue(ev.livemode)
        self.assertFalse(ev.test)
        self.assertEqual(ev.correlation_id, "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70")
        self.assertIsNone(ev.account)
        self.assertIsNone(ev.account_relationship)
        self.assertIsNone(ev.company_id)
        self.assertEqual(ev.data.type, "invoice.sent")
        self.assertEqual(ev.data.object["total"], "1210.00")
        self.assertEqual(ev.raw, body)
        self.assertEqual(ev.payload["id"], ID)
        self.assertEqual(ev.headers, Headers())

    def test_account_envelope(self) -> None:
        ev = parse_event(ACCOUNT_ENVELOPE)
        self.assertEqual(ev.account, Account(id="01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00"))
        self.assertEqual(ev.account_relationship, "managed")
        self.assertEqual(ev.company_id, "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a11")
        self.assertFalse(ev.livemode)
        self.assertIsNone(ev.correlation_id)
        self.assertEqual(ev.data.object["name"], "Fusteria Martí, S.L. — Girona")

    def test_older_version_and_defaults(self) -> None:
        ev = parse_event(b'{"id":"%s","type":"account.updated","api_version":"2025-06-01","data":{"object":{"id":"a"}},"extra":[1]}' % ID.encode())
        self.assertIsNone(ev.data.type)
        self.assertEqual(ev.data.object, {"id": "a"})
        self.assertTrue(ev.livemode, "livemode defaults to true when absent")
        self.assertIsNone(ev.created)
        ev = parse_event(b'{"id":"%s","type":"ping","test":true,"livemode":null,"company_id":null}' % ID.encode())
        self.assertTrue(ev.test)
        self.assertTrue(ev.livemode)

    def test_str_body(self) -> None:
        self.assertEqual(parse_event(event_body(ID).decode("utf-8")).id, ID)

    def test_invalid(self) -> None:
        cases = [
            ("empty", b"", "invalid event"),
            ("truncated", b'{"id":"' + ID.encode() + b'","type":', "invalid event"),
            ("array", b"[]", "not a JSON object"),
            ("string", b'"x"', "not a JSON object"),
            ("null", b"null", "not a JSON object"),
            ("no id", b'{"type":"invoice.sent"}', "no id"),
            ("empty id", b'{"id":"","type":"invoice.sent"}', "no id"),
            ("id a number", b'{"id":5,"type":"invoice.sent"}', "id is not a string"),
            ("id not a UUID", b'{"id":"evt_123","type":"invoice.sent"}', "not a canonical lowercase UUID"),
            ("uppercase id", b'{"id":"' + ID.upper().encode() + b'","type":"invoice.sent"}', "not a canonical lowercase UUID"),
            ("braced id", b'{"id":"{' + ID.encode() + b'}","type":"invoice.sent"}', "not a canonical lowercase UUID"),
            ("no type", b'{"id":"' + ID.encode() + b'"}', "no type"),
            ("type a number", b'{"id":"' + ID.encode() + b'","type":1}', "type is not a string"),
            ("created a string", b'{"id":"' + ID.encode() + b'","type":"t","created":"1790590561"}', "created is not an integer"),
            ("created a float", b'{"id":"' + ID.encode() + b'","type":"t","created":1.5}', "created"),
            ("created a bool", b'{"id":"' + ID.encode() + b'","type":"t","created":true}', "created"),
            ("created out of range", b'{"id":"' + ID.encode() + b'","type":"t","created":99999999999999999999}', "created is out of range"),
            ("livemode a string", b'{"id":"' + ID.encode() + b'","type":"t","livemode":"yes"}', "livemode is not a boolean"),
            ("data a list", b'{"id":"' + ID.encode() + b'","type":"t","data":[]}', "data is not a JSON object"),
            ("account id a number", b'{"id":"' + ID.encode() + b'","type":"t","account":{"id":1}}', "id is not a string"),
            ("NaN", b'{"id":"' + ID.encode() + b'","type":"t","x":NaN}', "NaN is not valid JSON"),
            ("not UTF-8", b'{"id":"' + ID.encode() + b'","type":"\xff"}', "invalid event"),
            ("UTF-8 BOM", b"\xef\xbb\xbf" + event_body(ID), "invalid event"),
            ("deeply nested", b'{"id":"' + ID.encode() + b'","type":"t","x":' + b"[" * 200000 + b"]" * 200000 + b"}", "invalid event"),
        ]
        for name, body, want in cases:
            with self.subTest(name):
                with self.assertRaises(InvalidEvent) as cm:
                    parse_event(body)
                self.assertIn(want, str(cm.exception))
                self.assertEqual(cm.exception.http_status, 400)


class ReadHeadersTest(unittest.TestCase):
    want = Headers(
        event_id=ID,
        event_type="invoice.sent",
        delivery_id="01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23",
        account_relationship="own",
        idempotency_key=ID,
        webhook_id=ID,
    )

    def test_any_case(self) -> None:
        raw = {
            "Factuarea-Event-Id": ID,
            "factuarea-event-type": "invoice.sent",
            "FACTUAREA-DELIVERY-ID": "01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23",
            "Factuarea-Account-Relationship": "own",
            "Idempotency-Key": ID,
            "Webhook-Id": ID,
        }
        self.assertEqual(read_headers(raw), self.want)
        self.assertEqual(read_headers(list(raw.items())), self.want)

    def test_first_of_repeated_wins(self) -> None:
        got = read_headers([("Factuarea-Event-Id", ID), ("factuarea-event-id", "other")])
        self.assertEqual(got.event_id, ID)


if __name__ == "__main__":
    unittest.main()
