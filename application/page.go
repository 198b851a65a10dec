package application

import (
	"encoding/base64"
	"sort"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Page sizes for keyset-paginated listings.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// pageTokenPrefix versions the token format so a future change can reject
// tokens it no longer understands.
const pageTokenPrefix = "k1:"

// PageRequest selects one page of a listing. MaxResults 0 means
// DefaultPageSize; PageToken is empty for the first page and otherwise a
// NextPageToken from an earlier page of the same listing.
type PageRequest struct {
	MaxResults int
	PageToken  string
}

// Page is one page of a listing. NextPageToken is empty on the last page.
type Page[T any] struct {
	Items         []T
	NextPageToken string
}

// paginate returns the page of items, ordered by key, whose keys follow the
// key encoded in the request's token. Keyset pagination stays consistent
// across concurrent creates and drops: a page never repeats or skips an item
// that existed throughout the listing.
func paginate[T any](items []T, key func(T) string, req PageRequest) (Page[T], error) {
	size, err := pageSize(req.MaxResults)
	if err != nil {
		return Page[T]{}, err
	}
	after, err := decodePageToken(req.PageToken)
	if err != nil {
		return Page[T]{}, err
	}
	sort.SliceStable(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
	start := 0
	if req.PageToken != "" {
		start = sort.Search(len(items), func(i int) bool { return key(items[i]) > after })
	}
	end := min(start+size, len(items))
	page := Page[T]{Items: items[start:end:end]}
	if end < len(items) {
		page.NextPageToken = encodePageToken(key(items[end-1]))
	}
	return page, nil
}

func pageSize(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultPageSize, nil
	case n < 1 || n > MaxPageSize:
		return 0, domain.InvalidArgument("max_results: must be between 1 and %d", MaxPageSize)
	default:
		return n, nil
	}
}

// encodePageToken makes the opaque token for a page that ends at last.
func encodePageToken(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pageTokenPrefix + last))
}

func decodePageToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || !strings.HasPrefix(string(raw), pageTokenPrefix) {
		return "", domain.InvalidArgument("page_token: not a token returned by this listing")
	}
	return strings.TrimPrefix(string(raw), pageTokenPrefix), nil
}
