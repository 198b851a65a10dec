package http

import (
	"bytes"
	"io"

	"github.com/go-json-experiment/json/jsontext"

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

// parseJSON builds the node tree of exactly one JSON value with a
// jsontext.Decoder (the tokenizer of every request document), refusing
// duplicate object keys and nesting deeper than maxJSONDepth. No field path
// is built while parsing (the body checker has reported paths already); a
// failure here names the byte offset.
func parseJSON(body []byte) (*node, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), requestJSONOptions...)
	root, err := parseTreeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	at := dec.InputOffset()
	if _, err := dec.ReadToken(); err != io.EOF {
		for at < int64(len(body)) && isJSONSpace(body[at]) {
			at++
		}
		return nil, domain.InvalidArgument("malformed JSON: unexpected data after the top-level value at byte %d", at)
	}
	return root, nil
}

func parseTreeValue(dec *jsontext.Decoder, depth int) (*node, error) {
	if depth > maxJSONDepth {
		return nil, domain.InvalidArgument("data type: JSON nests deeper than %d levels", maxJSONDepth)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, syntaxError(err, dec.InputOffset())
	}
	switch tok.Kind() {
	case '{':
		n := &node{kind: '{'}
		seen := map[string]bool{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, syntaxError(err, dec.InputOffset())
			}
			key := tok.String()
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
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntaxError(err, dec.InputOffset())
		}
		return n, nil
	case '[':
		n := &node{kind: '['}
		for dec.PeekKind() != ']' {
			item, err := parseTreeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, item)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntaxError(err, dec.InputOffset())
		}
		return n, nil
	case '"':
		return &node{kind: 's', text: tok.String()}, nil
	case '0':
		return &node{kind: 'n', text: tok.String()}, nil
	case 't', 'f':
		return &node{kind: 'b', text: tok.String()}, nil
	default: // null
		return &node{kind: 'z'}, nil
	}
}

// mismatch reports a value of the wrong JSON kind at path.
func mismatch(path, want string, n *node) error {
	got := map[byte]string{'{': "an object", '[': "an array", 's': "a string", 'n': "a number", 'b': "a boolean", 'z': "null"}[n.kind]
	return domain.InvalidArgument("%s: expected %s, got %s", orRoot(path), want, got)
}
