package payload

import "testing"

// BenchmarkPayloadAndCommand is what the worker does per job: parse the
// jobs.payload JSON and unserialize its command. chain-catch.json is a real
// 1.9 KB Laravel payload (a chain link with a signed closure).
func BenchmarkPayloadAndCommand(b *testing.B) {
	raw := readPayloadFixture(b, "chain-catch.json")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeCommand(p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncryptedPayloadAndCommand adds AES-256-CBC decryption.
func BenchmarkEncryptedPayloadAndCommand(b *testing.B) {
	raw := readPayloadFixture(b, "encrypted-aes-256-cbc.json")
	key, _ := ParseKey("base64:bGFyYXdvcmtlciBmaXh0dXJlIGtleSwgMzIgYnl0ZXM=")
	enc, err := NewEncrypter(key, "AES-256-CBC")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeCommand(p, enc); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzPayload feeds arbitrary jobs.payload documents through everything the
// worker does with one: parse, decode (and decrypt) the command, render it,
// re-encode it like queue:retry. Nothing may panic; a parsed command must
// serialize again.
func FuzzPayload(f *testing.F) {
	for _, name := range []string{"noop.json", "scalars.json", "models.json", "enums-dates.json", "chain.json",
		"closure.json", "string.json", "encrypted-aes-256-cbc.json", "encrypted-aes-128-gcm.json", "l13-object.json", "l7-object.json"} {
		f.Add(readPayloadFixture(f, name))
	}
	key, _ := ParseKey("base64:bGFyYXdvcmtlciBmaXh0dXJlIGtleSwgMzIgYnl0ZXM=")
	enc, _ := NewEncrypter(key, "AES-256-CBC")
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := Parse(raw)
		if err != nil {
			return
		}
		_, _ = ReencodeLikeRetry(raw, nil)
		cmd, err := DecodeCommand(p, enc)
		if err != nil {
			return
		}
		if _, err := cmd.Serialize(); err != nil {
			t.Fatalf("a decoded command must serialize again: %v", err)
		}
		if _, err := ReadableJSON(cmd.Object); err != nil {
			t.Fatalf("render: %v", err)
		}
		_ = cmd.Models()
		_ = cmd.Queueable()
		_, _ = NextInChain(cmd)
	})
}
