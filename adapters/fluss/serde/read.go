package serde

// This file holds the reading helpers the four documents share: a strict
// JSON tree, typed field access, and errors that name the JSON path.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// parseJSONTree decodes exactly one JSON value, keeping numbers as
// json.Number so that integers are checked exactly.
func parseJSONTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, jsonErrorf("", "empty JSON document")
		}
		return nil, jsonErrorf("", "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, jsonErrorf("", "malformed JSON: unexpected data after the top-level value")
	}
	return v, nil
}

func asObject(v any, path string) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, jsonErrorf(path, "must be a JSON object")
	}
	return obj, nil
}

// optString returns obj[key] as a string. A JSON null counts as absent.
func optString(obj map[string]any, key, path string) (string, bool, error) {
	v, ok := obj[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, isString := v.(string)
	if !isString {
		return "", false, jsonErrorf(joinPath(path, key), "must be a string")
	}
	return s, true, nil
}

func optInt32(obj map[string]any, key, path string) (int32, bool, error) {
	v, ok := obj[key]
	if !ok {
		return 0, false, nil
	}
	n, err := asInt32(v, joinPath(path, key))
	return n, err == nil, err
}

func asInt32(v any, path string) (int32, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, jsonErrorf(path, "must be an integer")
	}
	n, err := strconv.ParseInt(string(num), 10, 32)
	if err != nil {
		return 0, jsonErrorf(path, "must be an integer between %d and %d, got %s", math.MinInt32, math.MaxInt32, string(num))
	}
	return int32(n), nil
}

func intParam(obj map[string]any, key, path string, def int) (int, error) {
	n, ok, err := optInt32(obj, key, path)
	if err != nil {
		return 0, err
	}
	if !ok {
		return def, nil
	}
	return int(n), nil
}

func optStringList(obj map[string]any, key, path string) ([]string, bool, error) {
	v, ok := obj[key]
	if !ok {
		return nil, false, nil
	}
	lpath := joinPath(path, key)
	items, isArray := v.([]any)
	if !isArray {
		return nil, false, jsonErrorf(lpath, "must be an array of strings")
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, isString := item.(string)
		if !isString {
			return nil, false, jsonErrorf(indexPath(lpath, i), "must be a string")
		}
		out[i] = s
	}
	return out, true, nil
}

func requiredStringMap(obj map[string]any, key string) (map[string]string, error) {
	v, ok := obj[key]
	if !ok {
		return nil, jsonErrorf(key, "missing")
	}
	m, isObject := v.(map[string]any)
	if !isObject {
		return nil, jsonErrorf(key, "must be an object of strings")
	}
	out := make(map[string]string, len(m))
	for k, mv := range m {
		s, isString := mv.(string)
		if !isString {
			return nil, jsonErrorf(key+"."+strconv.Quote(k), "must be a string")
		}
		out[k] = s
	}
	return out, nil
}

func joinPath(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}

func indexPath(base string, i int) string {
	return base + "[" + strconv.Itoa(i) + "]"
}

// jsonErrorf builds a KindInvalidArgument *Error whose message is
// "path: reason" (or only the reason at the root).
func jsonErrorf(path, format string, args ...any) *domain.Error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &domain.Error{Kind: domain.KindInvalidArgument, Message: msg}
}

// prefixError puts path in front of the message of an *Error built by
// jsonErrorf for a sub-document.
func prefixError(path string, err error) error {
	e := domain.AsError(err)
	if path == "" || e == nil {
		return err
	}
	return &domain.Error{Kind: e.Kind, Message: path + "." + e.Message}
}
