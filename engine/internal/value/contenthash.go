package value

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"math"
	"slices"
)

// ContentHash writes JSON-like values into a SHA-256 so that two values
// hash alike exactly when the CUE would be given the same thing: map keys
// in order, and every leaf with its type, since JSON's text does not tell
// an int64 1 from a float64 1.0 and the CUE does (1.0 is no int). Every
// string and list is written with its length first, so that no two
// sequences of values share a text.
type ContentHash struct {
	h   hash.Hash
	buf [9]byte
	// leaf, when set, is what a string leaf (not a map key) is written
	// as.
	Leaf func(string) string
}

func NewContentHash() *ContentHash { return &ContentHash{h: sha256.New()} }

// Sum is the hash of what was written, as hex.
func (c *ContentHash) Sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

func (c *ContentHash) Tag(t byte, n uint64) {
	c.buf[0] = t
	binary.LittleEndian.PutUint64(c.buf[1:], n)
	_, _ = c.h.Write(c.buf[:])
}

// Str writes one string.
func (c *ContentHash) Str(s string) {
	c.Tag('s', uint64(len(s)))
	_, _ = c.h.Write([]byte(s))
}

// Value writes a JSON-like value; a nil map or list is null, as JSON has
// it. A leaf of another type (there is none in
// a decoded document) is written by its JSON with a tag of its own.
func (c *ContentHash) Value(v any) {
	switch x := v.(type) {
	case nil:
		c.Tag('z', 0)
	case bool:
		if x {
			c.Tag('b', 1)
		} else {
			c.Tag('b', 0)
		}
	case string:
		if c.Leaf != nil {
			x = c.Leaf(x)
		}
		c.Str(x)
	case int64:
		c.Tag('i', uint64(x))
	case int:
		c.Tag('i', uint64(x))
	case float64:
		c.Tag('f', math.Float64bits(x))
	case json.Number:
		c.Tag('n', 0)
		c.Str(string(x))
	case []any:
		if x == nil {
			c.Tag('z', 0)
			return
		}
		c.Tag('l', uint64(len(x)))
		for _, e := range x {
			c.Value(e)
		}
	case map[string]any:
		if x == nil {
			c.Tag('z', 0)
			return
		}
		c.Tag('m', uint64(len(x)))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c.Str(k)
			c.Value(x[k])
		}
	default:
		data, err := json.Marshal(x)
		if err != nil {
			data = []byte(err.Error())
		}
		c.Tag('x', 0)
		c.Str(fmt.Sprintf("%T", x))
		c.Str(string(data))
	}
}
