package payload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecrypt feeds arbitrary payloads to every cipher. Without the keys a
// mutation cannot forge a MAC or GCM tag, so a successful Decrypt must return
// one of the plaintexts that were really encrypted under the test keys; any
// other output means tampered data got through. Failures must be one of the
// four Laravel DecryptException texts.
func FuzzDecrypt(f *testing.F) {
	seeds, check := decryptFuzzSetup(f)
	for _, v := range seeds {
		f.Add(v.Payload, cipherIndex(v.Cipher))
	}
	f.Fuzz(func(t *testing.T, payload string, which uint8) {
		check(t, payload, which)
	})
}

// FuzzDecryptFields mutates the JSON fields rather than the outer base64, so
// that inputs reach the MAC, padding and GCM code instead of failing JSON
// parsing.
func FuzzDecryptFields(f *testing.F) {
	seeds, check := decryptFuzzSetup(f)
	for _, v := range seeds {
		var doc map[string]any
		if json.Unmarshal(phpBase64Decode(v.Payload, false), &doc) != nil {
			continue
		}
		str := func(k string) string { s, _ := doc[k].(string); return s }
		f.Add(str("iv"), str("value"), str("mac"), str("tag"), cipherIndex(v.Cipher))
	}
	f.Fuzz(func(t *testing.T, iv, value, mac, tag string, which uint8) {
		doc, err := json.Marshal(map[string]string{"iv": iv, "value": value, "mac": mac, "tag": tag})
		if err != nil {
			t.Skip()
		}
		check(t, base64.StdEncoding.EncodeToString(doc), which)
	})
}

// decryptFuzzSetup returns the seed vectors and the property every Decrypt
// call must satisfy.
func decryptFuzzSetup(f *testing.F) ([]encVector, func(*testing.T, string, uint8)) {
	vectors := loadEncVectors(f)
	seeds := append(append([]encVector{}, vectors.Vectors...), vectors.Tampered...)
	genuine := map[string]bool{}
	for _, v := range seeds {
		if v.Error == "" {
			genuine[string(v.plaintext(f))] = true
		}
		if v.Kind == "command" {
			// Decrypt (not DecryptCommand) returns the s:N:"..."; wrapper.
			genuine[string(wrapPHPString(v.plaintext(f)))] = true
		}
	}
	encs := make([]*Encrypter, len(encCipherNames))
	for i, c := range encCipherNames {
		encs[i] = mustEncrypter(f, c, testEncKey(c, "current"), testEncKey(c, "previous"))
	}
	wantErrs := []error{ErrDecryptPayloadInvalid, ErrDecryptMACInvalid, ErrDecryptFailed, ErrDecryptTagUnsupported}

	return seeds, func(t *testing.T, payload string, which uint8) {
		enc := encs[int(which)%len(encs)]
		got, err := enc.Decrypt(payload)
		if err == nil {
			if !genuine[string(got)] {
				t.Fatalf("%s returned a plaintext never encrypted under its keys: %q", enc.Cipher(), got)
			}
			return
		}
		if got != nil {
			t.Fatalf("plaintext returned with error %v", err)
		}
		known := false
		for _, w := range wantErrs {
			known = known || errors.Is(err, w)
		}
		if !known {
			t.Fatalf("unexpected error %T %v", err, err)
		}
	}
}

func cipherIndex(name string) uint8 {
	for i, c := range encCipherNames {
		if c == name {
			return uint8(i)
		}
	}
	return 0
}

// FuzzUnwrapPHPString checks the strict s:N:"..."; parser: accepted input is
// exactly what wrapPHPString would write for the returned bytes.
func FuzzUnwrapPHPString(f *testing.F) {
	for _, s := range []string{`s:0:"";`, `s:3:"abc";`, `s:3:"abc";x`, `s:03:"abc";`, `s:1:""";`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		inner, err := unwrapPHPString(in)
		if err != nil {
			return
		}
		if !bytes.Equal(wrapPHPString(inner), in) {
			t.Fatalf("accepted non-canonical %q", in)
		}
	})
}

// FuzzPHPBase64Decode: the encoding/base64 fast path agrees with the port
// of PHP's loop, strict success implies lenient success with the same bytes,
// and canonical encodings always round-trip.
func FuzzPHPBase64Decode(f *testing.F) {
	for _, s := range []string{"", "QQ==", "QUJD\nRA", "QQ==QUJD", "!@#", "QR==", "Q\r\nQ=\n=", "QUJD\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, strict := range []bool{false, true} {
			fast, slow := phpBase64Decode(s, strict), phpBase64DecodeLoop(s, strict)
			if (fast == nil) != (slow == nil) || !bytes.Equal(fast, slow) {
				t.Fatalf("strict=%v: fast path %q, PHP loop %q", strict, fast, slow)
			}
		}
		lenient := phpBase64Decode(s, false)
		if strict := phpBase64Decode(s, true); strict != nil && !bytes.Equal(strict, lenient) {
			t.Fatalf("strict %q != lenient %q", strict, lenient)
		}
		enc := base64.StdEncoding.EncodeToString([]byte(s))
		if got := phpBase64Decode(enc, true); !bytes.Equal(got, []byte(s)) {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
	})
}
