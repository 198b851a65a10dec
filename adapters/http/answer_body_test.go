package http

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// TestAnswerBodyChargesLikeAnOwnBuffer: an answer rendered into the
// response's pooled body (issue 22) is charged, step by step, exactly as
// one rendered into a buffer of its own with answerBudget.add, and refused
// at the same part when it would pass the cap or the budget.
func TestAnswerBodyChargesLikeAnOwnBuffer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		capacity int
		limit    int
		budget   int64
		held     int64       // held by another request
		parts    []int       // sizes of the parts added in turn
		fails    bool        // a part is refused:
		wantErr  domain.Kind // with this kind
		failAt   int         // the part's index
	}{
		{name: "within the first buffer", capacity: 256, limit: 1 << 20, budget: 1 << 20, parts: []int{20, 100, 100, 2}},
		{name: "grows by doubling", capacity: 256, limit: 1 << 20, budget: 1 << 20, parts: []int{200, 200, 300, 1000, 5000, 2}},
		{name: "one part larger than twice the buffer", capacity: 64, limit: 1 << 20, budget: 1 << 20, parts: []int{10, 10_000, 3}},
		{name: "growth capped by the limit", capacity: 256, limit: 3000, budget: 1 << 20, parts: []int{1000, 1000, 900}},
		{name: "over the answer cap", capacity: 256, limit: 1000, budget: 1 << 20, parts: []int{600, 300, 200}, fails: true, wantErr: domain.KindLimitExceeded, failAt: 2},
		{name: "over the memory budget", capacity: 256, limit: 1 << 20, budget: 2000, held: 1000, parts: []int{200, 500, 2000}, fails: true, wantErr: domain.KindResourceExhausted, failAt: 2},
		{name: "outgrows the pooled body", capacity: 256, limit: 1 << 20, budget: 1 << 20, parts: []int{1000, 70_000, 100_000, 300_000, 2}},
		{name: "one part larger than the pooled body", capacity: 256, limit: 1 << 20, budget: 1 << 20, parts: []int{10, 200_000, 3}},
		{name: "over the cap once outside the pooled body", capacity: 256, limit: 200_000, budget: 1 << 20, parts: []int{100_000, 90_000, 20_000}, fails: true, wantErr: domain.KindLimitExceeded, failAt: 2},
		{name: "over the budget once outside the pooled body", capacity: 256, limit: 1 << 20, budget: 400_000, held: 150_000, parts: []int{100_000, 20_000, 200_000}, fails: true, wantErr: domain.KindResourceExhausted, failAt: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			newBudget := func() *answerBudget {
				mb := membudget.New(tc.budget, time.Millisecond)
				if tc.held > 0 {
					require.NoError(t, mb.NewCharge().Acquire(context.Background(), tc.held))
				}
				return &answerBudget{ctx: context.Background(), ch: mb.NewCharge(), limit: tc.limit}
			}
			own, pooled := newBudget(), newBudget()
			var resp fasthttp.Response
			resp.SetBodyString("left over from another answer")
			w := pooled.answerInto(&resp, tc.capacity)
			defer w.done()
			out := make([]byte, 0, tc.capacity)
			var want strings.Builder
			for i, n := range tc.parts {
				piece := strings.Repeat(string(rune('a'+i)), n)
				var err1, err2 error
				out, err1 = own.add(out, []byte(piece))
				*w.part = append(*w.part, piece...)
				err2 = w.add()
				if tc.fails && i == tc.failAt {
					require.Error(t, err1)
					require.Error(t, err2)
					assert.Equal(t, tc.wantErr, domain.AsError(err2).Kind, "%v", err2)
					assert.Equal(t, domain.AsError(err1).Kind, domain.AsError(err2).Kind)
					break
				}
				require.NoError(t, err1)
				require.NoError(t, err2)
				want.WriteString(piece)
				assert.Equal(t, own.ch.Held(), pooled.ch.Held(), "charged after part %d", i)
				assert.Empty(t, *w.part, "the part is emptied once added")
				assert.LessOrEqual(t, len(resp.Body()), maxPooledAnswer, "the pooled body holds at most maxPooledAnswer bytes")
			}
			rendered := string(resp.Body())
			if w.own != nil {
				rendered = string(w.own)
			}
			assert.Equal(t, want.String(), rendered)
			assert.Equal(t, string(out), rendered)
			assert.Equal(t, own.ch.Held(), pooled.ch.Held())
			if !tc.fails {
				require.NoError(t, w.finish("]}"))
				assert.Equal(t, want.String()+"]}", string(resp.Body()))
			}
		})
	}
}
