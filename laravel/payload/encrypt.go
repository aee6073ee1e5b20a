package payload

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reimplements Illuminate\Encryption\Encrypter (laravel/framework,
// src/Illuminate/Encryption/Encrypter.php) so that
// commands of ShouldBeEncrypted jobs can be read and written. Behaviour
// follows Laravel 11+ (previous keys, tag checked before the MAC); payloads
// produced by Laravel 8.54+ decrypt identically.

// DefaultCipher is the skeleton's config/app.php default for app.cipher.
const DefaultCipher = "AES-256-CBC"

// DecryptError is a failure Laravel reports as a DecryptException. Its text is
// exactly Laravel's message, so failed_jobs and logs read the same as PHP's.
// It never contains key material.
type DecryptError struct{ msg string }

func (e *DecryptError) Error() string { return e.msg }

// The messages are Laravel's, capitalisation and full stop included.
var (
	ErrDecryptPayloadInvalid = &DecryptError{"The payload is invalid."}
	ErrDecryptMACInvalid     = &DecryptError{"The MAC is invalid."}
	ErrDecryptFailed         = &DecryptError{"Could not decrypt the data."}
	ErrDecryptTagUnsupported = &DecryptError{"Unable to use tag because the cipher algorithm does not support AEAD."}
)

// ErrMissingAppKey carries MissingAppKeyException's default message.
//
//lint:ignore ST1005 Laravel's MissingAppKeyException text, verbatim
var ErrMissingAppKey = errors.New("No application encryption key has been specified.")

type encCipherSpec struct {
	name    string
	keySize int
	aead    bool
}

// ivSize is openssl_cipher_iv_length() for the cipher.
func (c encCipherSpec) ivSize() int {
	if c.aead {
		return 12
	}
	return aes.BlockSize
}

// Order matters: it is the order Laravel lists them in its error message.
var encSupportedCiphers = []encCipherSpec{
	{"aes-128-cbc", 16, false},
	{"aes-256-cbc", 32, false},
	{"aes-128-gcm", 16, true},
	{"aes-256-gcm", 32, true},
}

const gcmTagSize = 16

func lookupCipher(name string) (encCipherSpec, error) {
	if name == "" {
		name = DefaultCipher
	}
	lower := strings.ToLower(name)
	names := make([]string, 0, len(encSupportedCiphers))
	for _, c := range encSupportedCiphers {
		if c.name == lower {
			return c, nil
		}
		names = append(names, c.name)
	}
	return encCipherSpec{}, fmt.Errorf("unsupported cipher %q: supported ciphers are %s", name, strings.Join(names, ", "))
}

// encKey is one key with its expanded AES schedule, built once because
// Decrypt runs for every encrypted job.
type encKey struct {
	raw   []byte
	block cipher.Block
	gcm   cipher.AEAD // nil for CBC
}

// Encrypter encrypts and decrypts values in Laravel's Encrypter format. It is
// immutable and safe for concurrent use.
type Encrypter struct {
	spec   encCipherSpec
	keys   []encKey // current key first, then previous keys in order
	random io.Reader
}

// NewEncrypter builds an Encrypter for app.key (already parsed, see ParseKey),
// app.cipher (case-insensitive; "" means DefaultCipher) and app.previous_keys.
// Errors name the offending key by position and length, never by content.
func NewEncrypter(key []byte, cipherName string, previousKeys ...[]byte) (*Encrypter, error) {
	spec, err := lookupCipher(cipherName)
	if err != nil {
		return nil, err
	}
	e := &Encrypter{spec: spec, random: rand.Reader}
	all := append([][]byte{key}, previousKeys...)
	for i, raw := range all {
		if len(raw) != spec.keySize {
			return nil, fmt.Errorf("%s is %d bytes long but cipher %s needs a %d-byte key",
				describeKey(i), len(raw), spec.name, spec.keySize)
		}
		k, err := expandKey(raw, spec)
		if err != nil {
			return nil, err
		}
		e.keys = append(e.keys, k)
	}
	return e, nil
}

func describeKey(i int) string {
	if i == 0 {
		return "application key (APP_KEY)"
	}
	return fmt.Sprintf("previous key #%d (APP_PREVIOUS_KEYS)", i)
}

func expandKey(raw []byte, spec encCipherSpec) (encKey, error) {
	k := encKey{raw: bytes.Clone(raw)}
	block, err := aes.NewCipher(k.raw)
	if err != nil {
		return encKey{}, fmt.Errorf("aes key setup: %w", err)
	}
	k.block = block
	if spec.aead {
		if k.gcm, err = cipher.NewGCM(block); err != nil {
			return encKey{}, fmt.Errorf("gcm setup: %w", err)
		}
	}
	return k, nil
}

// Cipher returns the lower-case cipher name.
func (e *Encrypter) Cipher() string { return e.spec.name }

// String and GoString keep keys out of %v / %#v output.
func (e *Encrypter) String() string {
	return fmt.Sprintf("Encrypter(%s, %d previous keys)", e.spec.name, len(e.keys)-1)
}

func (e *Encrypter) GoString() string { return e.String() }

// WithRandom returns a copy that draws IVs from r instead of crypto/rand;
// meant for deterministic tests.
func (e *Encrypter) WithRandom(r io.Reader) *Encrypter {
	c := *e
	c.random = r
	return &c
}

// ParseKey turns an app.key setting into key bytes the way
// EncryptionServiceProvider::parseKey does: a "base64:" prefix means the
// rest is base64 (decoded leniently, as PHP's base64_decode does), anything
// else is used as raw bytes. Like PHP's empty(), "" and "0" count as missing.
func ParseKey(s string) ([]byte, error) {
	if s == "" || s == "0" {
		return nil, ErrMissingAppKey
	}
	if rest, ok := strings.CutPrefix(s, "base64:"); ok {
		return phpBase64Decode(rest, false), nil
	}
	return []byte(s), nil
}

// ParsePreviousKeys parses APP_PREVIOUS_KEYS as Laravel 11's config does:
// split on commas, drop entries PHP's array_filter drops ("" and "0"), then
// ParseKey each one. Entries are not trimmed, as in Laravel.
func ParsePreviousKeys(commaSeparated string) ([][]byte, error) {
	var keys [][]byte
	for _, part := range strings.Split(commaSeparated, ",") {
		if part == "" || part == "0" {
			continue
		}
		k, err := ParseKey(part)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// Encrypt encrypts plaintext as-is (Laravel's encryptString; pass serialized
// bytes to get encrypt()) and returns base64(JSON{iv,value,mac,tag}).
func (e *Encrypter) Encrypt(plaintext []byte) (string, error) {
	iv := make([]byte, e.spec.ivSize())
	if _, err := io.ReadFull(e.random, iv); err != nil {
		return "", fmt.Errorf("reading random IV: %w", err)
	}
	key := e.keys[0]
	ivB64 := base64.StdEncoding.EncodeToString(iv)
	var value, mac, tag string
	if e.spec.aead {
		sealed := key.gcm.Seal(nil, iv, plaintext, nil)
		cut := len(sealed) - gcmTagSize
		value = base64.StdEncoding.EncodeToString(sealed[:cut])
		tag = base64.StdEncoding.EncodeToString(sealed[cut:])
	} else {
		value = base64.StdEncoding.EncodeToString(cbcEncrypt(key.block, iv, plaintext))
		mac = computeMAC(key.raw, ivB64, value)
	}
	// Every field is base64 or hex, so nothing needs JSON escaping; writing
	// the object by hand keeps Laravel's key order and unescaped slashes.
	doc := `{"iv":"` + ivB64 + `","value":"` + value + `","mac":"` + mac + `","tag":"` + tag + `"}`
	return base64.StdEncoding.EncodeToString([]byte(doc)), nil
}

func cbcEncrypt(block cipher.Block, iv, plaintext []byte) []byte {
	pad := aes.BlockSize - len(plaintext)%aes.BlockSize
	buf := make([]byte, len(plaintext)+pad)
	copy(buf, plaintext)
	for i := len(plaintext); i < len(buf); i++ {
		buf[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(buf, buf)
	return buf
}

// computeMAC is hash_hmac('sha256', $iv.$value, $key): lower-case hex over
// the base64 texts exactly as they appear in the JSON.
func computeMAC(key []byte, ivB64, value string) string {
	h := hmac.New(sha256.New, key)
	io.WriteString(h, ivB64)
	io.WriteString(h, value)
	return hex.EncodeToString(h.Sum(nil))
}

// encryptedDoc holds the JSON fields of an encrypted payload.
type encryptedDoc struct {
	iv, value, mac, tag string
	rawIV               []byte
}

// Decrypt reverses Encrypt (Laravel's decryptString). It tries the current
// key, then each previous key. Every failure is one of the ErrDecrypt*
// values.
func (e *Encrypter) Decrypt(payload string) ([]byte, error) {
	doc, err := e.parseDoc(payload)
	if err != nil {
		return nil, err
	}
	if e.spec.aead {
		return e.decryptGCM(doc)
	}
	if !phpEmptyString(doc.tag) {
		return nil, ErrDecryptTagUnsupported
	}
	return e.decryptCBC(doc)
}

func (e *Encrypter) decryptCBC(doc encryptedDoc) ([]byte, error) {
	for _, k := range e.keys {
		if hmac.Equal([]byte(computeMAC(k.raw, doc.iv, doc.value)), []byte(doc.mac)) {
			// Only the key that authenticated the payload may decrypt it.
			return cbcDecrypt(k.block, doc.rawIV, phpBase64Decode(doc.value, false))
		}
	}
	return nil, ErrDecryptMACInvalid
}

// cbcDecrypt does what openssl_decrypt does with PKCS#7 padding: whole
// blocks only, and the padding must be 1..16 copies of its length byte.
func cbcDecrypt(block cipher.Block, iv, ct []byte) ([]byte, error) {
	if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return nil, ErrDecryptFailed
	}
	buf := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(buf, ct)
	pad := int(buf[len(buf)-1])
	if pad == 0 || pad > aes.BlockSize {
		return nil, ErrDecryptFailed
	}
	for _, b := range buf[len(buf)-pad:] {
		if int(b) != pad {
			return nil, ErrDecryptFailed
		}
	}
	return buf[:len(buf)-pad], nil
}

// decryptGCM checks the tag length before Open because Open would accept
// the same bytes split differently between value and tag, which PHP rejects.
// An empty or "0" tag decodes to nothing and fails that check, as in PHP.
func (e *Encrypter) decryptGCM(doc encryptedDoc) ([]byte, error) {
	tag := phpBase64Decode(doc.tag, false)
	if len(tag) != gcmTagSize {
		return nil, ErrDecryptFailed
	}
	sealed := append(phpBase64Decode(doc.value, false), tag...)
	for _, k := range e.keys {
		if plain, err := k.gcm.Open(nil, doc.rawIV, sealed, nil); err == nil {
			if plain == nil {
				plain = []byte{}
			}
			return plain, nil
		}
	}
	return nil, ErrDecryptFailed
}

// parseDoc mirrors getJsonPayload/validPayload: iv, value and mac must be
// strings, tag a string when present, and iv must decode (strictly) to the
// cipher's IV length.
func (e *Encrypter) parseDoc(payload string) (encryptedDoc, error) {
	raw := phpBase64Decode(payload, false)
	// PHP's json_decode rejects invalid UTF-8 where Go would substitute it.
	if !utf8.Valid(raw) {
		return encryptedDoc{}, ErrDecryptPayloadInvalid
	}
	// A map, not a struct: struct decoding would match keys case-insensitively.
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return encryptedDoc{}, ErrDecryptPayloadInvalid
	}
	var doc encryptedDoc
	var ok bool
	for name, dst := range map[string]*string{"iv": &doc.iv, "value": &doc.value, "mac": &doc.mac} {
		if *dst, ok = fields[name].(string); !ok {
			return encryptedDoc{}, ErrDecryptPayloadInvalid
		}
	}
	if t, present := fields["tag"]; present && t != nil {
		if doc.tag, ok = t.(string); !ok {
			return encryptedDoc{}, ErrDecryptPayloadInvalid
		}
	}
	iv, valid := phpBase64DecodeStrict(doc.iv)
	if !valid || len(iv) != e.spec.ivSize() {
		return encryptedDoc{}, ErrDecryptPayloadInvalid
	}
	doc.rawIV = iv
	return doc, nil
}

// phpEmptyString is PHP's empty() on a string.
func phpEmptyString(s string) bool { return s == "" || s == "0" }

// PHP's base64 alphabet lookup: -1 whitespace (skipped even in strict mode),
// -2 anything else outside the alphabet.
var phpBase64Table = func() (t [256]int8) {
	for i := range t {
		t[i] = -2
	}
	for _, c := range "\t\n\r " {
		t[c] = -1
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(alphabet) {
		t[alphabet[i]] = int8(i)
	}
	return t
}()

// phpBase64Decode reproduces PHP's base64_decode($s, $strict). Laravel
// decodes the outer payload, the value and the tag leniently: characters
// outside the alphabet and '=' anywhere are skipped, and a dangling sixth
// bit group is dropped. It returns nil when strict decoding fails.
func phpBase64Decode(s string, strict bool) []byte {
	// Well-formed input, the usual case, means the same bytes in both
	// decoders, and Go's is several times faster.
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b
	}
	return phpBase64DecodeLoop(s, strict)
}

func phpBase64DecodeLoop(s string, strict bool) []byte {
	out := make([]byte, 0, len(s)*3/4+1)
	var acc byte // bits of the byte being built
	n, padding := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '=' {
			padding++
			continue
		}
		v := phpBase64Table[c]
		if v == -1 || (!strict && v < 0) {
			continue
		}
		if strict && (v < 0 || padding > 0) {
			return nil // bad character, or data after padding
		}
		switch n % 4 {
		case 0:
			acc = byte(v) << 2
		case 1:
			out = append(out, acc|byte(v)>>4)
			acc = byte(v) << 4
		case 2:
			out = append(out, acc|byte(v)>>2)
			acc = byte(v) << 6
		case 3:
			out = append(out, acc|byte(v))
		}
		n++
	}
	if strict && (n%4 == 1 || (padding > 0 && (padding > 2 || (n+padding)%4 != 0))) {
		return nil
	}
	return out
}

func phpBase64DecodeStrict(s string) ([]byte, bool) {
	b := phpBase64Decode(s, true)
	return b, b != nil
}

// IsEncryptedCommand applies CallQueuedHandler::getCommand's rule: a
// data.command starting with "O:" is a plain serialized object; anything else
// is handed to the Encrypter.
func IsEncryptedCommand(command string) bool {
	return !strings.HasPrefix(command, "O:")
}

// DecryptCommand decrypts an encrypted data.command and returns the
// serialized job ("O:..."). Laravel encrypts serialize(serialize($job)), so
// the plaintext is one PHP string, s:<len>:"<inner>";, which is unwrapped
// here.
func DecryptCommand(enc *Encrypter, command string) ([]byte, error) {
	plain, err := enc.Decrypt(command)
	if err != nil {
		return nil, err
	}
	inner, err := unwrapPHPString(plain)
	if err != nil {
		return nil, fmt.Errorf("decrypted command: %w", err)
	}
	return inner, nil
}

// EncryptCommand encrypts a serialized job the way Queue::createObjectPayload
// does, so that PHP workers can run it.
func EncryptCommand(enc *Encrypter, serializedCommand []byte) (string, error) {
	return enc.Encrypt(wrapPHPString(serializedCommand))
}

func wrapPHPString(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	out = append(out, "s:"...)
	out = strconv.AppendInt(out, int64(len(b)), 10)
	out = append(out, ':', '"')
	out = append(out, b...)
	return append(out, '"', ';')
}

// errNotPHPString is returned when a decrypted command is not exactly one
// serialized PHP string.
var errNotPHPString = errors.New(`not a serialized PHP string (s:<len>:"...";)`)

// unwrapPHPString parses exactly one s:<len>:"...";: canonical decimal
// length, the declared number of bytes, closing quote and semicolon, and
// nothing after.
func unwrapPHPString(b []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(b, []byte("s:"))
	if !ok {
		return nil, errNotPHPString
	}
	colon := bytes.IndexByte(rest, ':')
	if colon <= 0 || colon > 18 || (rest[0] == '0' && colon > 1) {
		return nil, errNotPHPString
	}
	n := 0
	for _, d := range rest[:colon] {
		if d < '0' || d > '9' {
			return nil, errNotPHPString
		}
		n = n*10 + int(d-'0')
	}
	body := rest[colon+1:]
	if n < 0 || len(body) < 1 || body[0] != '"' || len(body)-3 != n {
		return nil, errNotPHPString
	}
	if body[n+1] != '"' || body[n+2] != ';' {
		return nil, errNotPHPString
	}
	return body[1 : n+1], nil
}
