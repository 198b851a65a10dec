package http

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// framingProblemReference is framingProblem as it was before issue 22 made
// it allocation-free: the head split into lines, every name lowercased and
// counted in a map. The new one must answer exactly as it does.
func framingProblemReference(h *fasthttp.RequestHeader, single []string) string {
	raw := h.RawHeaders()
	if bytes.Contains(raw, []byte("\n ")) || bytes.Contains(raw, []byte("\n\t")) {
		return "header lines folded onto continuation lines are not accepted"
	}
	var contentLength, transferEncoding bool
	counts := map[string]int{}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		name, _, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		n := strings.ToLower(string(bytes.TrimSpace(name)))
		switch n {
		case "content-length":
			contentLength = true
		case "transfer-encoding":
			transferEncoding = true
		}
		counts[n]++
	}
	if contentLength && transferEncoding {
		return "Content-Length and Transfer-Encoding must not both be sent"
	}
	for _, name := range single {
		if counts[strings.ToLower(name)] > 1 {
			return "the " + name + " header must not be sent more than once"
		}
	}
	return ""
}

// parseHead parses a request head made of the given header lines; false
// when fasthttp refuses it.
func parseHead(t testing.TB, lines string) (*fasthttp.RequestHeader, bool) {
	t.Helper()
	var h fasthttp.RequestHeader
	err := h.Read(bufio.NewReader(strings.NewReader("POST /v1/clusters HTTP/1.1\r\nHost: x\r\n" + lines + "\r\n")))
	return &h, err == nil
}

var framingSingles = []string{"Authorization", "X-Forwarded-User", "X-Act-As"}

func TestFramingProblem(t *testing.T) {
	cases := []struct {
		name  string
		lines string
		want  string // a part of the problem; "" for none
	}{
		{name: "ordinary", lines: "Content-Type: application/json\r\nContent-Length: 2\r\nAuthorization: Bearer x\r\n"},
		{name: "both framings", lines: "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", want: "must not both be sent"},
		{name: "both framings, other case", lines: "content-LENGTH: 2\r\ntransfer-encoding: chunked\r\n", want: "must not both be sent"},
		{name: "repeated Authorization", lines: "Authorization: a\r\nauthorization: b\r\n", want: "the Authorization header"},
		{name: "repeated trusted header", lines: "X-Forwarded-User: a\r\nX-FORWARDED-USER: b\r\n", want: "the X-Forwarded-User header"},
		{name: "repeated act-as header", lines: "X-Act-As: a\r\nX-Act-As: a\r\n", want: "the X-Act-As header"},
		{name: "one of each single header", lines: "Authorization: a\r\nX-Forwarded-User: b\r\nX-Act-As: c\r\n"},
		{name: "repeated ordinary header", lines: "Accept: a\r\nAccept: b\r\n"},
		{name: "a longer name sharing a prefix", lines: "Authorization: a\r\nAuthorizations: b\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, ok := parseHead(t, tc.lines)
			require.True(t, ok)
			got := framingProblem(h, framingSingles)
			assert.Equal(t, framingProblemReference(h, framingSingles), got)
			if tc.want == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tc.want)
			}
		})
	}
	h, ok := parseHead(t, "Content-Type: application/json\r\nAuthorization: x\r\n")
	require.True(t, ok)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = framingProblem(h, framingSingles) }), "no allocation per request")
}

func TestSameHeaderName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, s string
		want    bool
	}{
		{"Content-Length", "content-length", true},
		{"content-length", "Content-Length", true},
		{"Content-Lengths", "content-length", false},
		{"", "", true},
		{"X-Key", "x-\u212Aey", true}, // the Kelvin sign lowercases to k
		{"X-\u212Aey", "x-key", true},
		{"X-\u00c9", "x-\u00e9", true},
		{"X-\u00c9", "x-e", false},
	}
	for _, tc := range cases {
		lower := strings.ToLower(tc.name)
		assert.Equal(t, lower == strings.ToLower(tc.s), sameHeaderName([]byte(tc.name), tc.s), "%q %q", tc.name, tc.s)
		assert.Equal(t, tc.want, sameHeaderName([]byte(tc.name), tc.s), "%q %q", tc.name, tc.s)
	}
}

// FuzzFramingProblem holds framingProblem to the reference on any head
// fasthttp accepts.
func FuzzFramingProblem(f *testing.F) {
	f.Add("Content-Length: 2\r\nTransfer-Encoding: chunked\r\n")
	f.Add("Authorization: a\r\nauthorization: b\r\n")
	f.Add("X-Act-\u212As: a\r\nx-act-ks: b\r\n")
	f.Add("Accept: a\r\n b\r\n")
	f.Fuzz(func(t *testing.T, lines string) {
		h, ok := parseHead(t, lines)
		if !ok {
			return
		}
		if got, want := framingProblem(h, framingSingles), framingProblemReference(h, framingSingles); got != want {
			t.Fatalf("framingProblem = %q, the reference says %q", got, want)
		}
	})
}
