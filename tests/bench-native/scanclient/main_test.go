package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answerOf renders a scan answer of records (each given up to its row) as
// the gateway does.
func answerOf(records ...string) string {
	return `{"records":[` + strings.Join(records, ",") + `],"cursor":"c1","caught_up":true}`
}

// benchRecord is a record of the scan benchmark's table as the gateway
// renders it.
func benchRecord(bucket, offset int) string {
	return fmt.Sprintf(`{"bucket":%d,"offset":%d,"timestamp":"2026-12-02T03:59:43.598Z","change_type":"+A","row":{"k":"%d","name":"user-%d",`+
		`"amount":"0.00","qty":0,"price":0.25,"flag":true,"day":"2022-01-08","ts":"2023-11-14T22:13:20.000Z",`+
		`"note":"payload-%d-0123456789abcdef0123456789abcdef","raw":"AAAAAAAAAAAAAAAAAAAAAA=="}}`, bucket, offset, offset, offset, offset)
}

// TestReadAnswer: every record's bucket and offset are read, whatever the
// order of its fields (the gateway's own order takes a shortcut), and an
// answer that is not well-formed, names a field twice, or skips or repeats
// an offset is refused.
func TestReadAnswer(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		records int
		next    offsets
		err     string
	}{
		{"the gateway's order", answerOf(benchRecord(0, 0), benchRecord(1, 0), benchRecord(0, 1)), 3, offsets{0: 2, 1: 1}, ""},
		{"a partition first", answerOf(`{"partition":"2026","bucket":2,"offset":0,"row":{}}`), 1, offsets{2: 1}, ""},
		{"a partition with an escape", answerOf(`{"partition":"a\"b","bucket":2,"offset":0,"row":{}}`), 1, offsets{2: 1}, ""},
		{"another order", answerOf(`{"row":{"bucket":9},"offset":0,"bucket":3}`, `{"offset":1,"bucket":3}`), 2, offsets{3: 2}, ""},
		{"spaces", answerOf(`{ "bucket" : 1 , "offset" : 0 }`), 1, offsets{1: 1}, ""},
		{"large offsets", answerOf(`{"bucket":1,"offset":1234567890123456789,"row":{}}`), 0, offsets{}, "offset 1234567890123456789 where 0 was due"},
		{"no answer", answerOf(), 0, offsets{}, ""},
		{"a gap", answerOf(benchRecord(0, 0), benchRecord(0, 2)), 0, nil, "bucket 0: offset 2 where 1 was due"},
		{"a repeat", answerOf(benchRecord(0, 0), benchRecord(0, 0)), 0, nil, "bucket 0: offset 0 where 1 was due"},
		{"a name twice", answerOf(`{"bucket":0,"offset":0,"bucket":1}`), 0, nil, "duplicate object member name"},
		{"not well-formed", answerOf(`{"bucket":0,"offset":0,"row":{"a":tru}}`), 0, nil, "in literal true"},
		{"a leading zero", answerOf(`{"bucket":0,"offset":01}`), 0, nil, "invalid"},
		{"no offset", answerOf(`{"bucket":0,"row":{}}`), 0, nil, "without bucket or offset"},
		{"no cursor", `{"records":[]}`, 0, nil, "no cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next := offsets{}
			a, err := readAnswer(strings.NewReader(tc.body), next)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.records, a.Records)
			assert.Equal(t, "c1", a.Cursor)
			assert.True(t, a.CaughtUp)
			assert.Equal(t, tc.next, next)
		})
	}
}

// TestReadNDJSON: a streamed answer's record lines are read and checked as
// a JSON answer's records are, the cursor line must come last, and an
// error line fails.
func TestReadNDJSON(t *testing.T) {
	cursor := `{"cursor":"c1","caught_up":false}` + "\n"
	tests := []struct {
		name    string
		body    string
		records int
		err     string
	}{
		{"records then the cursor", benchRecord(0, 0) + "\n" + benchRecord(1, 0) + "\n" + benchRecord(0, 1) + "\n" + cursor, 3, ""},
		{"no records", cursor, 0, ""},
		{"a gap", benchRecord(0, 1) + "\n" + cursor, 0, "offset 1 where 0 was due"},
		{"an error line", benchRecord(0, 0) + "\n" + `{"error":{"code":"limit_exceeded","message":"x"}}` + "\n", 0, "ended with"},
		{"no cursor line", benchRecord(0, 0) + "\n", 0, "no cursor line"},
		{"a line after the cursor", cursor + benchRecord(0, 0) + "\n", 0, "after the cursor line"},
		{"not well-formed", `{"bucket":0,"offset":0,"row":{]}` + "\n" + cursor, 0, "invalid character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next := offsets{}
			a, err := readNDJSON(strings.NewReader(tc.body), next)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.records, a.Records)
			assert.Equal(t, "c1", a.Cursor)
			assert.False(t, a.CaughtUp)
		})
	}
}

// BenchmarkReadAnswer reads a 9,000-record answer of the scan benchmark's
// table (four buckets), as one request of tests/bench-native/scan.sh;
// cpu-ns/row is the client's CPU per record.
func BenchmarkReadAnswer(b *testing.B) {
	var recs []string
	for i := range 9000 {
		recs = append(recs, benchRecord(i%4, i/4))
	}
	body := answerOf(recs...)
	b.SetBytes(int64(len(body)))
	cpu0 := cpuTime()
	for b.Loop() {
		a, err := readAnswer(strings.NewReader(body), offsets{})
		if err != nil || a.Records != 9000 {
			b.Fatal(err, a.Records)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(9000*b.N), "cpu-ns/row")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
