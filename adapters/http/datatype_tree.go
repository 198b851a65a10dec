package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// node is a parsed JSON value with object members kept in document order.
// Only data type documents are parsed into trees (datatype.go): they are a
// few hundred bytes, have already passed the body's shape check
// (shapeChecker), and nest at most domain.MaxTypeNesting levels.
type node struct {
	kind  byte // '{', '[', 's' string, 'n' number, 'b' boolean, 'z' null
	keys  []string
	items []*node // object member values (parallel to keys) or array elements
	text  string  // string value or number literal
}

// parseJSON builds the node tree of exactly one JSON value, refusing
// duplicate object keys and nesting deeper than maxJSONDepth. No field path
// is built while parsing (the body checker has reported paths already); a
// failure here names the byte offset.
func parseJSON(body []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	root, err := parseTreeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, domain.InvalidArgument("malformed JSON: unexpected data after the top-level value at byte %d", dec.InputOffset())
	}
	return root, nil
}

func parseTreeValue(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxJSONDepth {
		return nil, domain.InvalidArgument("data type: JSON nests deeper than %d levels", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, treeSyntaxError(dec, err)
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &node{kind: '{'}
			seen := map[string]bool{}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, treeSyntaxError(dec, err)
				}
				key, _ := tok.(string)
				if seen[key] {
					return nil, domain.InvalidArgument("data type: duplicate key %q", truncateUTF8(key, 64))
				}
				seen[key] = true
				item, err := parseTreeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.items = append(n.items, item)
			}
			if _, err := dec.Token(); err != nil {
				return nil, treeSyntaxError(dec, err)
			}
			return n, nil
		case '[':
			n := &node{kind: '['}
			for dec.More() {
				item, err := parseTreeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, item)
			}
			if _, err := dec.Token(); err != nil {
				return nil, treeSyntaxError(dec, err)
			}
			return n, nil
		}
		return nil, domain.InvalidArgument("malformed JSON at byte %d", dec.InputOffset())
	case string:
		return &node{kind: 's', text: v}, nil
	case json.Number:
		return &node{kind: 'n', text: v.String()}, nil
	case bool:
		return &node{kind: 'b', text: strconv.FormatBool(v)}, nil
	default: // nil
		return &node{kind: 'z'}, nil
	}
}

func treeSyntaxError(dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return domain.InvalidArgument("malformed JSON at byte %d: %s", se.Offset, se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return domain.InvalidArgument("malformed JSON: unexpected end of input at byte %d", dec.InputOffset())
	}
	return domain.InvalidArgument("malformed JSON at byte %d: %v", dec.InputOffset(), err)
}

// mismatch reports a value of the wrong JSON kind at path.
func mismatch(path, want string, n *node) error {
	got := map[byte]string{'{': "an object", '[': "an array", 's': "a string", 'n': "a number", 'b': "a boolean", 'z': "null"}[n.kind]
	return domain.InvalidArgument("%s: expected %s, got %s", orRoot(path), want, got)
}
