package http

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"reflect"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// maxJSONDepth bounds the nesting of request documents. It sits well above
// what domain.MaxTypeNesting allows a data type, so that limit is the one a
// legitimate request meets first.
const maxJSONDepth = 256

// decodeBody checks the media type and decodes the JSON body strictly into
// dst, a pointer to a struct: duplicate keys, unknown fields and type
// mismatches are invalid_argument errors naming the field.
func (a *api) decodeBody(c *fiber.Ctx, dst any) error {
	body, err := a.jsonBody(c)
	if err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// jsonBody checks the media type and returns the request body, decompressed
// when it is sent with Content-Encoding gzip. The decompressed size is held
// to the same limit as the body itself, so a small compressed body cannot
// expand without bound. The result is only valid during the handler.
func (a *api) jsonBody(c *fiber.Ctx) ([]byte, error) {
	if err := checkJSONMediaType(c.Get(fiber.HeaderContentType)); err != nil {
		return nil, err
	}
	raw := c.Request().Body()
	switch enc := strings.ToLower(strings.TrimSpace(c.Get(fiber.HeaderContentEncoding))); enc {
	case "", "identity":
		return raw, nil
	case "gzip", "x-gzip":
		return gunzipLimited(raw, a.opts.MaxRequestBytes)
	default:
		return nil, newHTTPError(fiber.StatusUnsupportedMediaType, codeUnsupportedMediaType,
			"Content-Encoding %q is not supported; send the body uncompressed or with gzip", quoteHeader(enc))
	}
}

// gunzipLimited decompresses a gzip body of at most limit bytes.
func gunzipLimited(raw []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, domain.InvalidArgument("invalid gzip request body: %v", err)
	}
	defer func() { _ = zr.Close() }()
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, domain.InvalidArgument("invalid gzip request body: %v", err)
	}
	if n > limit {
		return nil, &domain.Error{Kind: domain.KindLimitExceeded,
			Message: fmt.Sprintf("decompressed request body exceeds the limit of %d bytes", limit)}
	}
	return out.Bytes(), nil
}

// checkJSONMediaType accepts application/json and application/*+json.
func checkJSONMediaType(contentType string) error {
	unsupported := newHTTPError(fiber.StatusUnsupportedMediaType, codeUnsupportedMediaType,
		"Content-Type must be application/json or application/*+json")
	if contentType == "" {
		return unsupported
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return unsupported
	}
	if mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json") {
		return nil
	}
	return unsupported
}

// decodeStrict is decodeBody without the media-type check.
func decodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return domain.InvalidArgument("request body is empty; expected a JSON object")
	}
	tree, err := parseJSON(body)
	if err != nil {
		return err
	}
	if err := checkShape(tree, reflect.TypeOf(dst).Elem(), ""); err != nil {
		return err
	}
	if err := json.Unmarshal(body, dst); err != nil {
		// checkShape has vetted structure and types; anything left is a value
		// encoding/json refuses, such as an invalid string escape.
		return domain.InvalidArgument("invalid JSON body: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// node is a parsed JSON value with object members kept in document order.
type node struct {
	kind  byte // '{', '[', 's' string, 'n' number, 'b' boolean, 'z' null
	keys  []string
	items []*node // object member values (parallel to keys) or array elements
	text  string  // string value or number literal
}

// parseJSON builds the node tree of exactly one JSON value, rejecting
// duplicate object keys (which encoding/json silently merges) and excessive
// nesting, and reporting syntax errors with their byte offset.
func parseJSON(body []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	root, err := parseValue(dec, "", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, domain.InvalidArgument("malformed JSON: unexpected data after the top-level value at byte %d", dec.InputOffset())
	}
	return root, nil
}

func parseValue(dec *json.Decoder, path string, depth int) (*node, error) {
	if depth > maxJSONDepth {
		return nil, domain.InvalidArgument("%s: JSON nests deeper than %d levels", orRoot(path), maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(dec, err)
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return parseObject(dec, path, depth)
		}
		if v == '[' {
			return parseArray(dec, path, depth)
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

func parseObject(dec *json.Decoder, path string, depth int) (*node, error) {
	n := &node{kind: '{'}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(dec, err)
		}
		key, _ := tok.(string)
		kpath := joinField(path, key)
		if seen[key] {
			return nil, domain.InvalidArgument("%s: duplicate key", kpath)
		}
		seen[key] = true
		v, err := parseValue(dec, kpath, depth+1)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.items = append(n.items, v)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, syntaxError(dec, err)
	}
	return n, nil
}

func parseArray(dec *json.Decoder, path string, depth int) (*node, error) {
	n := &node{kind: '['}
	for i := 0; dec.More(); i++ {
		v, err := parseValue(dec, fmt.Sprintf("%s[%d]", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, v)
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, syntaxError(dec, err)
	}
	return n, nil
}

func syntaxError(dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return domain.InvalidArgument("malformed JSON at byte %d: %s", se.Offset, se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return domain.InvalidArgument("malformed JSON: unexpected end of input at byte %d", dec.InputOffset())
	}
	return domain.InvalidArgument("malformed JSON at byte %d: %v", dec.InputOffset(), err)
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// checkShape checks n against the Go type t that it will be decoded into:
// objects only carry the fields t declares, and scalars have t's JSON type.
// null is accepted everywhere and leaves the Go zero value.
func checkShape(n *node, t reflect.Type, path string) error {
	if n.kind == 'z' {
		return nil
	}
	if t == rawMessageType {
		// The only raw documents in request bodies are data types.
		return checkDataType(n, path, 0)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkShape(n, t.Elem(), path)
	case reflect.Struct:
		if n.kind != '{' {
			return mismatch(path, "an object", n)
		}
		fields := jsonFields(t)
		for i, key := range n.keys {
			ft, ok := fields[key]
			if !ok {
				return domain.InvalidArgument("%s: unknown field", joinField(path, key))
			}
			if err := checkShape(n.items[i], ft, joinField(path, key)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.kind != '[' {
			return mismatch(path, "an array", n)
		}
		for i, item := range n.items {
			if err := checkShape(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.kind != '{' {
			return mismatch(path, "an object", n)
		}
		for i, key := range n.keys {
			if err := checkShape(n.items[i], t.Elem(), path+"."+strconv.Quote(key)); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.kind != 's' {
			return mismatch(path, "a string", n)
		}
	case reflect.Bool:
		if n.kind != 'b' {
			return mismatch(path, "a boolean", n)
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		if n.kind != 'n' {
			return mismatch(path, "an integer", n)
		}
		v, err := strconv.ParseInt(n.text, 10, 64)
		limit := int64(math.MaxInt32)
		if t.Kind() == reflect.Int64 {
			limit = math.MaxInt64
		}
		if err != nil || v > limit || v < -limit-1 {
			return domain.InvalidArgument("%s: expected an integer in range, got %s", orRoot(path), n.text)
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's exported fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func mismatch(path, want string, n *node) error {
	got := map[byte]string{'{': "an object", '[': "an array", 's': "a string", 'n': "a number", 'b': "a boolean"}[n.kind]
	return domain.InvalidArgument("%s: expected %s, got %s", orRoot(path), want, got)
}

func joinField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "request body"
	}
	return path
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// writeJSONBody encodes v as the JSON response body.
func writeJSONBody(c *fiber.Ctx, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(body)
}
