package http

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// maxJSONDepth bounds the nesting of request documents. It sits well above
// what domain.MaxTypeNesting allows a data type, so that limit is the one a
// legitimate request meets first.
const maxJSONDepth = 256

// dataTypeKeys and dataFieldKeys are the members of Fluss's DataType and ROW
// field JSON (apache/fluss: utils/json/DataTypeJsonSerde.java). The domain
// reader ignores unknown members; the REST API rejects them so that a typo
// such as "precison" is not silently replaced by a default.
var (
	dataTypeKeys  = []string{"type", "nullable", "length", "precision", "scale", "element_type", "key_type", "value_type", "fields"}
	dataFieldKeys = []string{"name", "field_type", "description", "field_id"}
)

// DefaultMaxMetadataRequestBytes is the default body limit of the catalog
// routes (gateway.rest.metadata.max-request-bytes): a database, table or
// partition definition is a few KiB, far below the write limit.
const DefaultMaxMetadataRequestBytes = 1 << 20

// maxJSONKeyBytes bounds an object key of a request document. Fluss names
// are at most 200 characters; property keys are short too.
const maxJSONKeyBytes = 1024

// decodeBody checks the media type and decodes the JSON body of a catalog
// route strictly into dst, a pointer to a struct: duplicate keys, unknown
// fields and type mismatches are invalid_argument errors naming the field.
// The body (decompressed) is held to the metadata body limit, and the
// request deadline is checked while the document is parsed.
func (a *api) decodeBody(c *fiber.Ctx, dst any) error {
	limit := a.metadataBodyLimit()
	if n := len(c.Request().Body()); int64(n) > limit {
		return &domain.Error{Kind: domain.KindLimitExceeded,
			Message: fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes for catalog requests", n, limit)}
	}
	body, err := a.jsonBodyLimited(c, limit)
	if err != nil {
		return err
	}
	return decodeStrictContext(c.UserContext(), body, dst)
}

// metadataBodyLimit is Options.MaxMetadataRequestBytes, defaulted and never
// above the write limit.
func (a *api) metadataBodyLimit() int64 {
	limit := a.opts.MaxMetadataRequestBytes
	if limit <= 0 {
		limit = DefaultMaxMetadataRequestBytes
	}
	return min(limit, a.opts.MaxRequestBytes)
}

// jsonBody checks the media type and returns the request body, decompressed
// when it is sent with Content-Encoding gzip. The decompressed size is held
// to the same limit as the body itself, so a small compressed body cannot
// expand without bound. The result is only valid during the handler.
func (a *api) jsonBody(c *fiber.Ctx) ([]byte, error) {
	return a.jsonBodyLimited(c, a.opts.MaxRequestBytes)
}

// jsonBodyLimited is jsonBody with the decompressed size held to limit.
func (a *api) jsonBodyLimited(c *fiber.Ctx, limit int64) ([]byte, error) {
	if err := checkJSONMediaType(c.Get(fiber.HeaderContentType)); err != nil {
		return nil, err
	}
	return a.decodedBody(c, limit)
}

// localDecodedBody caches the decompressed body of a request.
const localDecodedBody = "fluss-gateway.decoded-body"

// decodedBody returns the request body decoded as its Content-Encoding
// says (identity or gzip), at most limit bytes once decoded. A gzip body is
// decompressed once per request: the quota and the rate limit count the
// decoded bytes, and the handler reuses them.
func (a *api) decodedBody(c *fiber.Ctx, limit int64) ([]byte, error) {
	raw := c.Request().Body()
	switch enc := strings.ToLower(strings.TrimSpace(c.Get(fiber.HeaderContentEncoding))); enc {
	case "", "identity":
		return raw, nil
	case "gzip", "x-gzip":
		if b, ok := c.Locals(localDecodedBody).([]byte); ok {
			if int64(len(b)) > limit {
				return nil, &domain.Error{Kind: domain.KindLimitExceeded,
					Message: fmt.Sprintf("decompressed request body exceeds the limit of %d bytes", limit)}
			}
			return b, nil
		}
		// The decompressed bytes are charged to the memory budget as they
		// are produced; the buffer gunzipLimited allocates for the size the
		// body declares is charged before it is allocated, and counts
		// towards them.
		ch := a.charge(c)
		hint := gzipSizeHint(raw, limit)
		if err := ch.Acquire(c.UserContext(), hint); err != nil {
			return nil, budgetError(err, "the decompressed request body")
		}
		b, err := gunzipLimited(raw, limit, func(r io.Reader) io.Reader {
			return ch.Reader(c.UserContext(), r, bodyReadStep).Prepaid(hint)
		})
		if err != nil {
			return nil, budgetError(err, "the decompressed request body")
		}
		c.Locals(localDecodedBody, b)
		return b, nil
	default:
		return nil, newHTTPError(fiber.StatusUnsupportedMediaType, codeUnsupportedMediaType,
			"Content-Encoding %q is not supported; send the body uncompressed or with gzip", quoteHeader(enc))
	}
}

// decodedBodySize is the size of the decoded body, what the byte quota and
// the write rate limit count; the body limit of the route r applies.
func (a *api) decodedBodySize(c *fiber.Ctx, r routeSpec) (int, error) {
	limit := a.opts.MaxRequestBytes
	if r.admission == admitMetadata {
		limit = a.metadataBodyLimit()
	}
	b, err := a.decodedBody(c, limit)
	return len(b), err
}

// gunzipLimited decompresses a gzip body of at most limit bytes; count
// (nil: none) wraps the decompressor's output, e.g. to charge it to the
// memory budget; its errors are returned as they are.
func gunzipLimited(raw []byte, limit int64, count func(io.Reader) io.Reader) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, domain.InvalidArgument("invalid gzip request body: %v", err)
	}
	defer func() { _ = zr.Close() }()
	var src io.Reader = &gzipErrors{zr}
	if count != nil {
		src = count(src)
	}
	var out bytes.Buffer
	// A body of one member decodes into one buffer of the size it
	// declares, instead of a buffer doubled (and copied) as it fills.
	if hint := gzipSizeHint(raw, limit); hint > 0 {
		out.Grow(int(hint))
	}
	n, err := out.ReadFrom(io.LimitReader(src, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, &domain.Error{Kind: domain.KindLimitExceeded,
			Message: fmt.Sprintf("decompressed request body exceeds the limit of %d bytes", limit)}
	}
	return out.Bytes(), nil
}

// gzipSizeHint is the buffer gunzipLimited allocates at once for the gzip
// body raw: the size its last member declares, modulo 2^32 (RFC 1952 section
// 2.3.1, ISIZE), at most limit, plus one byte to detect a body over the
// limit; 0 for a body too short to be gzip. A lying ISIZE costs at most the
// limit, which the caller charges before the allocation.
func gzipSizeHint(raw []byte, limit int64) int64 {
	if len(raw) < 18 {
		return 0
	}
	hint := int64(binary.LittleEndian.Uint32(raw[len(raw)-4:]))
	if hint == 0 {
		return 0
	}
	return min(hint, limit) + 1
}

// gzipErrors reports the decompressor's failures as invalid_argument.
type gzipErrors struct{ r io.Reader }

func (g *gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = domain.InvalidArgument("invalid gzip request body: %v", err)
	}
	return n, err
}

// checkJSONMediaType accepts application/json and application/*+json.
func checkJSONMediaType(contentType string) error {
	if contentType == fiber.MIMEApplicationJSON {
		return nil // the common value, without a parse (issue 22)
	}
	unsupported := func() error {
		return newHTTPError(fiber.StatusUnsupportedMediaType, codeUnsupportedMediaType,
			"Content-Type must be application/json or application/*+json")
	}
	if contentType == "" {
		return unsupported()
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return unsupported()
	}
	if mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json") {
		return nil
	}
	return unsupported()
}

// The request documents of this adapter are read with one JSON stack, the
// JSON v2 module (github.com/go-json-experiment/json): rowjson's write and
// lookup decoders, the shape check and binding below, and data type
// documents (datatype_tree.go) all read tokens with jsontext.Decoder.
// requestJSONOptions are the tokenizer options of the catalog and scan
// bodies: duplicate names are found by the shape check, which names their
// path, and invalid UTF-8 is replaced with U+FFFD, as encoding/json did
// before (rowjson, the row codec, refuses it).
var requestJSONOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
}

// decodeStrict is decodeBody without the media-type check, the limit and a
// deadline.
func decodeStrict(body []byte, dst any) error {
	return decodeStrictContext(context.Background(), body, dst)
}

// decodeStrictContext vets body against dst's Go type in one streaming pass
// over its tokens (see shapeChecker), then binds it with json.Unmarshal
// (JSON v2). Both passes are linear in the body's size and hold memory
// proportional to its nesting, not its size.
func decodeStrictContext(ctx context.Context, body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return domain.InvalidArgument("request body is empty; expected a JSON object")
	}
	if err := checkDocument(ctx, body, reflect.TypeOf(dst).Elem()); err != nil {
		return err
	}
	if err := json.Unmarshal(body, dst, requestJSONOptions...); err != nil {
		// The shape check has vetted structure and types; anything left is
		// a value the binder refuses.
		return domain.InvalidArgument("invalid JSON body: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// checkDocument checks that body is exactly one JSON value of the shape of
// the Go type t (see shapeChecker).
func checkDocument(ctx context.Context, body []byte, t reflect.Type) error {
	s := &shapeChecker{dec: jsontext.NewDecoder(bytes.NewBuffer(body), requestJSONOptions...), ctx: ctx}
	if err := s.value(expect{t: t}, 0); err != nil {
		return err
	}
	at := s.dec.InputOffset()
	if _, err := s.dec.ReadToken(); err != io.EOF {
		for at < int64(len(body)) && isJSONSpace(body[at]) {
			at++
		}
		return domain.InvalidArgument("malformed JSON: unexpected data after the top-level value at byte %d", at)
	}
	return nil
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// deadlineCheckEvery is how many values the checker reads between two looks
// at the request deadline.
const deadlineCheckEvery = 1024

// shapeChecker reads a JSON document (RFC 8259) token by token with a
// jsontext.Decoder and checks it against the Go type it will be decoded
// into: objects carry only the fields the type declares, scalars have its
// JSON type, integers fit it, object keys are unique and at most
// maxJSONKeyBytes long, nesting stays within maxJSONDepth, and members of
// Fluss DataType documents are known. null is accepted everywhere (it
// leaves the Go zero value). It stops at the first violation, so a document
// with a bad member costs only the bytes up to it, and it allocates only for
// object keys.
//
// The field path of a message ("columns[2].data_type.precision") is kept as
// a stack of segments and turned into text only when an error is reported,
// so the cost per member is constant whatever the length of its keys.
type shapeChecker struct {
	dec    *jsontext.Decoder
	ctx    context.Context
	values int
	path   []pathSegment
}

// pathSegment is one step of a field path: an object member, a map entry
// (quoted in messages) or an array index.
type pathSegment struct {
	key   string
	index int
	kind  byte // '.' member, '"' map key, '[' index
}

// expect is what a value must look like: a Go type, or a part of a Fluss
// DataType document (dataType: a data type object at nesting typeDepth;
// rowFields: the "fields" array of a ROW type; rowField: one of its
// elements), or anything (any).
type expect struct {
	t         reflect.Type
	dataType  bool
	rowFields bool
	rowField  bool
	typeDepth int
	any       bool
}

func (s *shapeChecker) push(seg pathSegment) { s.path = append(s.path, seg) }
func (s *shapeChecker) pop()                 { s.path = s.path[:len(s.path)-1] }

// maxPathKeyInMessage bounds how much of one key a message repeats.
const maxPathKeyInMessage = 64

// pathString renders the current path, shortening long keys.
func (s *shapeChecker) pathString() string {
	var b strings.Builder
	for _, seg := range s.path {
		key := seg.key
		if len(key) > maxPathKeyInMessage {
			key = truncateUTF8(key, maxPathKeyInMessage) + "…"
		}
		switch seg.kind {
		case '[':
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(seg.index))
			b.WriteByte(']')
		case '"':
			b.WriteByte('.')
			b.WriteString(strconv.Quote(key))
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(key)
		}
	}
	return b.String()
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func (s *shapeChecker) errorf(format string, args ...any) error {
	return domain.InvalidArgument("%s: "+format, append([]any{orRoot(s.pathString())}, args...)...)
}

// syntax turns a tokenizer error into a malformed-JSON message naming the
// byte offset.
func (s *shapeChecker) syntax(err error) error {
	return syntaxError(err, s.dec.InputOffset())
}

// syntaxError is the message of a jsontext error; at is the decoder's
// offset, used when the error has none.
func syntaxError(err error, at int64) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		at = se.ByteOffset
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return domain.InvalidArgument("malformed JSON: unexpected end of input at byte %d", at)
	}
	what := err.Error()
	if se != nil && se.Err != nil {
		what = se.Err.Error()
	}
	return domain.InvalidArgument("malformed JSON at byte %d: %s", at, what)
}

// jsonKind names the kind of a JSON value for messages.
func jsonKind(k jsontext.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// peek returns the kind of the next value; a value that cannot start is
// read, so that its syntax error is returned.
func (s *shapeChecker) peek() (jsontext.Kind, error) {
	if k := s.dec.PeekKind(); k != 0 {
		return k, nil
	}
	_, err := s.dec.ReadToken()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return 0, s.syntax(err)
}

// scalar consumes the next value, a scalar, and returns its text.
func (s *shapeChecker) scalar() (jsontext.Value, error) {
	v, err := s.dec.ReadValue()
	if err != nil {
		return nil, s.syntax(err)
	}
	return v, nil
}

// value checks the next value against e.
func (s *shapeChecker) value(e expect, depth int) error {
	if depth > maxJSONDepth {
		return s.errorf("JSON nests deeper than %d levels", maxJSONDepth)
	}
	s.values++
	if s.values%deadlineCheckEvery == 0 && s.ctx != nil {
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	k, err := s.peek()
	if err != nil {
		return err
	}
	if k == 'n' {
		_, err := s.scalar()
		return err
	}
	switch {
	case e.any:
		return s.skip(k, depth)
	case e.dataType:
		return s.dataType(k, e.typeDepth, depth)
	case e.rowFields:
		if k != '[' {
			return s.mismatch("an array", k)
		}
		return s.elements(expect{rowField: true, typeDepth: e.typeDepth}, depth)
	case e.rowField:
		if k != '{' {
			return s.mismatch("an object", k)
		}
		return s.members(depth, '.', func(key string) (expect, error) {
			if !contains(dataFieldKeys, key) {
				return expect{}, s.errorf("unknown field of a ROW field")
			}
			if key == "field_type" {
				return expect{dataType: true, typeDepth: e.typeDepth + 1}, nil
			}
			return expect{any: true}, nil
		})
	}
	t := e.t
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawValueType {
		// The only raw documents in request bodies are data types.
		return s.dataType(k, 0, depth)
	}
	switch t.Kind() {
	case reflect.Struct:
		if k != '{' {
			return s.mismatch("an object", k)
		}
		fields := jsonFields(t)
		return s.members(depth, '.', func(key string) (expect, error) {
			ft, ok := fields[key]
			if !ok {
				return expect{}, s.errorf("unknown field")
			}
			return expect{t: ft}, nil
		})
	case reflect.Slice:
		if k != '[' {
			return s.mismatch("an array", k)
		}
		return s.elements(expect{t: t.Elem()}, depth)
	case reflect.Map:
		if k != '{' {
			return s.mismatch("an object", k)
		}
		return s.members(depth, '"', func(string) (expect, error) { return expect{t: t.Elem()}, nil })
	case reflect.String:
		if k != '"' {
			return s.mismatch("a string", k)
		}
		_, err := s.scalar()
		return err
	case reflect.Bool:
		if k != 't' && k != 'f' {
			return s.mismatch("a boolean", k)
		}
		_, err := s.scalar()
		return err
	case reflect.Int, reflect.Int32, reflect.Int64:
		if k != '0' {
			return s.mismatch("an integer", k)
		}
		num, err := s.scalar()
		if err != nil {
			return err
		}
		v, perr := strconv.ParseInt(string(num), 10, 64)
		limit := int64(math.MaxInt32)
		if t.Kind() == reflect.Int64 {
			limit = math.MaxInt64
		}
		if perr != nil || v > limit || v < -limit-1 {
			return s.errorf("expected an integer in range, got %s", quoteHeader(string(num)))
		}
		return nil
	}
	return s.skip(k, depth)
}

// members checks an object whose '{' is next; field says what each key's
// value must be (or refuses the key). kind is '.' for struct members and
// '"' for map keys.
func (s *shapeChecker) members(depth int, kind byte, field func(key string) (expect, error)) error {
	if _, err := s.dec.ReadToken(); err != nil { // '{'
		return s.syntax(err)
	}
	var seen map[string]struct{}
	for {
		tok, err := s.dec.ReadToken()
		if err != nil {
			return s.syntax(err)
		}
		if tok.Kind() == '}' {
			return nil
		}
		key := tok.String()
		s.push(pathSegment{key: key, kind: kind})
		if len(key) > maxJSONKeyBytes {
			return s.errorf("object key of %d bytes is longer than the limit of %d bytes", len(key), maxJSONKeyBytes)
		}
		if seen == nil {
			seen = map[string]struct{}{}
		}
		if _, dup := seen[key]; dup {
			return s.errorf("duplicate key")
		}
		seen[key] = struct{}{}
		e, err := field(key)
		if err != nil {
			return err
		}
		if err := s.value(e, depth+1); err != nil {
			return err
		}
		s.pop()
	}
}

// elements checks an array whose '[' is next.
func (s *shapeChecker) elements(e expect, depth int) error {
	if _, err := s.dec.ReadToken(); err != nil { // '['
		return s.syntax(err)
	}
	s.push(pathSegment{kind: '['})
	for i := 0; ; i++ {
		if s.dec.PeekKind() == ']' {
			if _, err := s.dec.ReadToken(); err != nil {
				return s.syntax(err)
			}
			s.pop()
			return nil
		}
		s.path[len(s.path)-1].index = i
		if err := s.value(e, depth+1); err != nil {
			return err
		}
	}
}

// skip checks a value of kind k of any shape: only syntax, duplicate keys,
// key lengths and nesting.
func (s *shapeChecker) skip(k jsontext.Kind, depth int) error {
	switch k {
	case '{':
		return s.members(depth, '"', func(string) (expect, error) { return expect{any: true}, nil })
	case '[':
		return s.elements(expect{any: true}, depth)
	}
	_, err := s.scalar()
	return err
}

// dataType checks a Fluss DataType object that is next (of kind k): its
// members are known, nested types are objects, nesting stays within
// domain.MaxTypeNesting; the domain reader checks the rest.
func (s *shapeChecker) dataType(k jsontext.Kind, typeDepth, depth int) error {
	if typeDepth > domain.MaxTypeNesting {
		return s.errorf("data types nest deeper than %d levels", domain.MaxTypeNesting)
	}
	if k != '{' {
		return s.mismatch("a data type object such as {\"type\":\"INTEGER\"}", k)
	}
	return s.members(depth, '.', func(key string) (expect, error) {
		switch {
		case !contains(dataTypeKeys, key):
			return expect{}, s.errorf("unknown field of a data type")
		case key == "element_type" || key == "key_type" || key == "value_type":
			return expect{dataType: true, typeDepth: typeDepth + 1}, nil
		case key == "fields":
			return expect{rowFields: true, typeDepth: typeDepth}, nil
		}
		return expect{any: true}, nil
	})
}

// mismatch reports a value of the wrong kind k.
func (s *shapeChecker) mismatch(want string, k jsontext.Kind) error {
	return s.errorf("expected %s, got %s", want, jsonKind(k))
}

var rawValueType = reflect.TypeFor[jsontext.Value]()

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
	body, err := stdjson.Marshal(v)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(body)
}
