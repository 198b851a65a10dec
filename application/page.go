package application

import (
	"sort"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// Page sizes for keyset-paginated listings.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

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
// that existed throughout the listing. Page tokens are sealed (internal/sealed)
// and bound to scope, the listing they belong to: a token of another listing,
// cluster or principal, or an altered one, is invalid_argument.
func paginate[T any](tokens *sealed.Sealer, scope tokenScope, items []T, key func(T) string, req PageRequest) (Page[T], error) {
	size, err := pageSize(req.MaxResults)
	if err != nil {
		return Page[T]{}, err
	}
	after, err := openPageToken(tokens, scope, req.PageToken)
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
		page.NextPageToken = sealPageToken(tokens, scope, key(items[end-1]))
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
