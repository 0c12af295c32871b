package edit

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"strings"
)

// Generate is one #Generate of the CUE: data the CUE cannot make.
type Generate struct {
	Path       []string
	Kind       string
	PrivateKey string
	PublicKey  string
	Key        string
	From       string
	Seed       string
	SeedFrom   *string
	Encoding   string
	Text       string
}

// YAMLSource gives the YAML text of a context entry.
type YAMLSource func(name string) (string, error)

// Check finds what would keep the generator from running on obj (its
// path, its seed, its encoding, its kind), without running it: a render
// whose generators run later (deferred, rendermemo.go) still reports them
// at the rule.
func (g Generate) Check(obj map[string]any, yamlOf YAMLSource) error {
	if _, err := MapAt(obj, g.Path); err != nil {
		return err
	}
	switch g.Kind {
	case "ssh-keypair":
		return nil
	case "x25519-keypair":
		if _, err := g.seed(); err != nil {
			return err
		}
		if g.Encoding != "z85" {
			return fmt.Errorf("unknown encoding %q", g.Encoding)
		}
		return nil
	case "yaml":
		_, err := yamlOf(g.From)
		return err
	}
	return fmt.Errorf("unknown kind %q", g.Kind)
}

// seed is the x25519 key pair's seed: the SHA-256 of seedFrom, else seed
// decoded, nil for none.
func (g Generate) seed() ([]byte, error) {
	if g.SeedFrom != nil {
		sum := sha256.Sum256([]byte(*g.SeedFrom))
		return sum[:], nil
	}
	if g.Seed == "" {
		return nil, nil
	}
	seed, err := base64.StdEncoding.DecodeString(g.Seed)
	if err != nil {
		return nil, fmt.Errorf("seed: %v", err)
	}
	return seed, nil
}

func (g Generate) Run(obj map[string]any, yamlOf YAMLSource) error {
	m, err := MapAt(obj, g.Path)
	if err != nil {
		return err
	}
	switch g.Kind {
	case "ssh-keypair":
		private, public, err := sshKeyPair()
		if err != nil {
			return err
		}
		m[g.PrivateKey] = base64.StdEncoding.EncodeToString(private)
		m[g.PublicKey] = base64.StdEncoding.EncodeToString(public)
		return nil
	case "x25519-keypair":
		seed, err := g.seed()
		if err != nil {
			return err
		}
		private, public, err := x25519KeyPair(seed)
		if err != nil {
			return err
		}
		if g.Encoding != "z85" {
			return fmt.Errorf("unknown encoding %q", g.Encoding)
		}
		privateText, err := z85(private)
		if err != nil {
			return err
		}
		publicText, err := z85(public)
		if err != nil {
			return err
		}
		text := strings.NewReplacer("{{privateKey}}", privateText, "{{publicKey}}", publicText).Replace(g.Text)
		m[g.Key] = base64.StdEncoding.EncodeToString([]byte(text))
		return nil
	case "yaml":
		text, err := yamlOf(g.From)
		if err != nil {
			return err
		}
		m[g.Key] = text
		return nil
	}
	return fmt.Errorf("unknown kind %q", g.Kind)
}

// sshKeyPair makes an ECDSA P-521 key: the private key as PEM "EC PRIVATE
// KEY", the public key as an authorized_keys line.
func sshKeyPair() (private, public []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	private = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	point, err := key.PublicKey.ECDH()
	if err != nil {
		return nil, nil, err
	}
	// RFC 5656: string "ecdsa-sha2-nistp521", string "nistp521", string Q.
	var wire []byte
	for _, field := range [][]byte{[]byte("ecdsa-sha2-nistp521"), []byte("nistp521"), point.Bytes()} {
		wire = binary.BigEndian.AppendUint32(wire, uint32(len(field)))
		wire = append(wire, field...)
	}
	public = []byte("ecdsa-sha2-nistp521 " + base64.StdEncoding.EncodeToString(wire) + "\n")
	return private, public, nil
}

// x25519KeyPair makes an X25519 key pair (RFC 7748): the private key is the
// 32 bytes of seed, or random when there is none.
func x25519KeyPair(seed []byte) (private, public []byte, err error) {
	var key *ecdh.PrivateKey
	if seed == nil {
		key, err = ecdh.X25519().GenerateKey(rand.Reader)
	} else {
		key, err = ecdh.X25519().NewPrivateKey(seed)
	}
	if err != nil {
		return nil, nil, err
	}
	return key.Bytes(), key.PublicKey().Bytes(), nil
}

// z85 encodes data as ZeroMQ's Z85 (RFC 32/Z85): five characters for every
// four bytes; Z85 takes only whole groups of four.
func z85(data []byte) (string, error) {
	if len(data)%4 != 0 {
		return "", fmt.Errorf("z85 takes a multiple of 4 bytes, not %d", len(data))
	}
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
	var b strings.Builder
	for i := 0; i < len(data); i += 4 {
		v := binary.BigEndian.Uint32(data[i:])
		var chunk [5]byte
		for j := 4; j >= 0; j-- {
			chunk[j] = alphabet[v%85]
			v /= 85
		}
		b.Write(chunk[:])
	}
	return b.String(), nil
}
