package engine

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"fmt"
)

// generate is one #Generate of the CUE: data the CUE cannot make.
type generate struct {
	Path       []string
	Kind       string
	PrivateKey string
	PublicKey  string
	Key        string
	From       string
}

// yamlSource gives the YAML text of a context entry.
type yamlSource func(name string) (string, error)

func (g generate) run(obj map[string]any, yamlOf yamlSource) error {
	m, err := mapAt(obj, g.Path)
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
