package edit

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// TestZ85: the Z85 spec's example, and whole groups only.
func TestZ85(t *testing.T) {
	got, err := z85([]byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B})
	if err != nil || got != "HelloWorld" {
		t.Errorf("z85 = %q, %v; want HelloWorld", got, err)
	}
	if got, err := z85(make([]byte, 4)); err != nil || got != "00000" {
		t.Errorf("z85 of zeros = %q, %v", got, err)
	}
	if _, err := z85([]byte{1, 2, 3}); err == nil {
		t.Error("z85 of 3 bytes: no error")
	}
}

// TestX25519KeyPair: RFC 7748's example (Alice's key pair), and a random key
// without a seed.
func TestX25519KeyPair(t *testing.T) {
	seed, _ := hex.DecodeString("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
	private, public, err := x25519KeyPair(seed)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(private) != hex.EncodeToString(seed) {
		t.Errorf("private key %x, want the seed", private)
	}
	if got := hex.EncodeToString(public); got != "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a" {
		t.Errorf("public key %s", got)
	}
	a, _, err := x25519KeyPair(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := x25519KeyPair(nil)
	if len(a) != 32 || string(a) == string(b) {
		t.Errorf("random keys %x, %x", a, b)
	}
	if _, _, err := x25519KeyPair([]byte{1}); err == nil {
		t.Error("a 1-byte seed: no error")
	}
}

// TestGenerateX25519: the keys, Z85-encoded, fill the text, which is written
// base64 at key.
func TestGenerateX25519(t *testing.T) {
	seed, _ := hex.DecodeString("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
	obj := map[string]any{}
	g := Generate{Path: []string{"data"}, Kind: "x25519-keypair", Seed: base64.StdEncoding.EncodeToString(seed),
		Encoding: "z85", Key: "k", Text: "pub={{publicKey}} priv={{privateKey}}\n"}
	if err := g.Run(obj, nil); err != nil {
		t.Fatal(err)
	}
	text, err := base64.StdEncoding.DecodeString(obj["data"].(map[string]any)["k"].(string))
	if err != nil {
		t.Fatal(err)
	}
	public, _ := hex.DecodeString("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
	wantPublic, _ := z85(public)
	wantPrivate, _ := z85(seed)
	if want := "pub=" + wantPublic + " priv=" + wantPrivate + "\n"; string(text) != want {
		t.Errorf("text %q, want %q", text, want)
	}
	for _, bad := range []Generate{
		{Kind: "x25519-keypair", Encoding: "hex"},
		{Kind: "x25519-keypair", Encoding: "z85", Seed: "not base64!"},
		{Kind: "x25519-keypair", Encoding: "z85", Seed: base64.StdEncoding.EncodeToString([]byte("short"))},
	} {
		if err := bad.Run(map[string]any{}, nil); err == nil || strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%+v: no error", bad)
		}
	}
}
