package bodycodec

import (
	"bytes"
	stdflate "compress/flate"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"testing"
)

const envelope = `{"id":"01a234da-6675-7174-9d09-aabc722b87cd","type":"invoice.sent","api_version":"2026-09-23","created":1796183058,` +
	`"livemode":false,"test":false,"correlation_id":null,"data":{"type":"invoice.sent","object":{"object":"invoice","number":"FAC-BENCH",` +
	`"total":"1210.00","currency":"EUR","sent_at":1796183058036699900}}}`

func TestRoundTrip(t *testing.T) {
	random := make([]byte, 300)
	rand.Read(random)
	for _, body := range [][]byte{
		[]byte(envelope),
		[]byte(`{}`),
		[]byte(`{"a":1}`),
		[]byte(hex.EncodeToString(random)),
		random, // not JSON, and does not deflate: stored as it is
		bytes.Repeat([]byte(envelope), 200),
		{markerV1}, // a body that starts with the marker is never stored as it is
		{markerV1, '{', '}'},
	} {
		stored := Encode(body)
		got, err := Decode(stored)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("Decode(Encode(%.40q)) = %.40q, %v", body, got, err)
		}
		if len(stored) > len(body) && body[0] != markerV1 {
			t.Errorf("%.40q: stored in %d bytes, more than its %d", body, len(stored), len(body))
		}
	}
	if n := len(Encode([]byte(envelope))); n > len(envelope)/2 {
		t.Errorf("the envelope: %d bytes stored of %d, want at most half", n, len(envelope))
	}
	// A body stored before this form existed reads back as it is.
	if got, err := Decode([]byte(envelope)); err != nil || string(got) != envelope {
		t.Errorf("a body stored as it is: %q, %v", got, err)
	}
	if _, err := Decode([]byte{markerV1, 0xff, 0xff}); err == nil {
		t.Error("a corrupt stored body: no error")
	}
}

// TestStandardInflate: the stored form is plain deflate with a preset
// dictionary, which the standard library's inflater reads too.
func TestStandardInflate(t *testing.T) {
	stored := Encode([]byte(envelope))
	got, err := io.ReadAll(stdflate.NewReaderDict(bytes.NewReader(stored[1:]), dictV1))
	if err != nil || string(got) != envelope {
		t.Errorf("compress/flate: %q, %v", got, err)
	}
}

func TestConcurrent(t *testing.T) {
	done := make(chan error)
	for i := range 8 {
		go func() {
			for j := range 200 {
				body := fmt.Appendf(nil, `{"id":"%d-%d","type":"invoice.sent","data":{"object":{"n":%d}}}`, i, j, j)
				got, err := Decode(Encode(body))
				if err != nil || !bytes.Equal(got, body) {
					done <- fmt.Errorf("%s: %q, %v", body, got, err)
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	body := []byte(envelope)
	b.ReportMetric(float64(len(Encode(body))), "stored-bytes")
	for b.Loop() {
		Encode(body)
	}
}

func BenchmarkDecode(b *testing.B) {
	stored := Encode([]byte(envelope))
	for b.Loop() {
		Decode(stored)
	}
}
