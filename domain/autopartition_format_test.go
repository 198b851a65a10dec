package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The verdicts below on patterns (TestCompileTimeFormat) and on values
// (TestAutoPartitionTimeFormatValues, where the note is empty) are those of
// Fluss 1.0's own checks: PartitionUtils#validateTimeFormat and
// #validateAutoPartitionTime of the 1.0-SNAPSHOT server jar (apache/fluss
// 545c553, the jar tests run against), called on each case on JDK 17 on
// 2026-12-02. A note marks a value where the gateway deliberately differs
// from Fluss's java.time parse (see AutoPartition.CheckFormat).

func TestCompileTimeFormat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		unit    AutoPartitionUnit
		pattern string
		errHas  string // "" when Fluss accepts the pattern
	}{
		{UnitDay, "yyyy-MM-dd", ""}, {UnitDay, "uuuu-MM-dd", ""}, {UnitDay, "yyyy_MM_dd", ""},
		{UnitDay, "yyyyMMdd", ""}, {UnitDay, "yyyyLLdd", ""}, {UnitDay, "uuuu-LL-dd", ""},
		{UnitDay, "yyyy'-'MM'-'dd", ""}, {UnitDay, "'d'yyyyMMdd", ""}, {UnitDay, "yyyy-MM-dd'T'", ""},
		{UnitHour, "yyyyMMdd-HH", ""}, {UnitHour, "yyyy-MM-dd_HH", ""}, {UnitHour, "yyyyMMddHH", ""},
		{UnitQuarter, "yyyy-Q", ""}, {UnitQuarter, "yyyy'Q'Q", ""}, {UnitQuarter, "yyyy-q", ""}, {UnitQuarter, "yyyyQ", ""},
		{UnitMonth, "yyyy_MM", ""}, {UnitMonth, "yyyy-LL", ""}, {UnitMonth, "yyyyMM", ""},
		{UnitYear, "uuuu", ""}, {UnitYear, "yyyy", ""}, {UnitYear, "'y'yyyy", ""},

		{UnitDay, "MM-yyyy", "in this order"}, {UnitDay, "yyyy-MM", "in this order"},
		{UnitDay, "yyyy-dd-MM", "in this order"}, {UnitDay, "yyyy-MM-dd-HH", "in this order"},
		{UnitDay, "", "in this order"},
		{UnitDay, "yyyy-M-dd", "width 2, got 1"}, {UnitDay, "yyyy-MMM-dd", "width 2, got 3"},
		{UnitDay, "yy-MM-dd", "width 4, got 2"}, {UnitDay, "yyyyy-MM-dd", "width 4, got 5"},
		{UnitQuarter, "yyyyQQ", "width 1, got 2"}, {UnitQuarter, "yyyy-QQQ", "width 1, got 3"},
		{UnitHour, "yyyyMMddhh", "'h'"}, {UnitHour, "yyyyMMddkk", "'k'"}, {UnitDay, "yyyy-MM-dd-mm", "'m'"},
		{UnitHour, "yyyyMMddHHmm", "'m'"}, {UnitDay, "yyyy-MM-ddGG", "'G'"}, {UnitDay, "yyyy-MM-ddD", "'D'"},
		{UnitDay, "yyyy-MM-ddTHH", "'T'"},
		{UnitDay, "yyyy-MM-dd[-HH]", "optional sections"},
		{UnitDay, "yyyy#MM#dd", "reserved"}, {UnitDay, "yyyy-MM-dd{x}", "reserved"},
		{UnitDay, "yyyy-MM-dd'", "not closed"}, {UnitYear, "yyyy'", "not closed"},
		{UnitDay, "yyyy/MM/dd", "characters other than"}, {UnitDay, "yyyy MM dd", "characters other than"},
		{UnitDay, "yyyy.MM.dd", "characters other than"}, {UnitDay, "yyyy年MM月dd", "characters other than"},
		{UnitMonth, "yyyy''MM", "characters other than"}, {UnitDay, "yyyy-MM'-'dd''", "characters other than"},
		{UnitDay, "'__'yyyyMMdd", "reserved"},
	}
	for _, c := range cases {
		l, err := compileTimeFormat(c.pattern, c.unit)
		if c.errHas == "" {
			require.NoError(t, err, "%s %q", c.unit, c.pattern)
			assert.NotEmpty(t, l)
			continue
		}
		require.Error(t, err, "%s %q", c.unit, c.pattern)
		assert.Contains(t, err.Error(), c.errHas, "%s %q", c.unit, c.pattern)
	}
}

func TestAutoPartitionTimeFormatValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		unit    AutoPartitionUnit
		pattern string
		value   string
		ok      bool
		note    string // why the gateway differs from Fluss here
	}{
		{UnitDay, "yyyy-MM-dd", "2026-12-02", true, ""},
		{UnitDay, "yyyy-MM-dd", "2026-02-29", false, "Fluss's SMART parse clamps a day past the month's end"},
		{UnitDay, "yyyy-MM-dd", "2024-02-29", true, ""},
		{UnitDay, "yyyy-MM-dd", "2026-02-31", false, "as above"},
		{UnitDay, "yyyy-MM-dd", "+12026-12-02", false, "Fluss reads years past 9999 after a '+'"},
		{UnitDay, "yyyy-MM-dd", "20261202", false, ""},
		{UnitDay, "yyyy-MM-dd", "2026-12-2", false, ""},
		{UnitDay, "yyyy-MM-dd", "2026-13-01", false, ""},
		{UnitDay, "yyyy-MM-dd", "2026-12-00", false, ""},
		{UnitDay, "yyyy-MM-dd", "2026-12-32", false, ""},
		{UnitDay, "yyyy-MM-dd", "0000-12-02", false, ""},
		{UnitDay, "yyyy-MM-dd", "2026-12-02-", false, ""},
		{UnitDay, "yyyy-MM-dd", "2026_12_02", false, ""},
		{UnitDay, "yyyy-MM-dd", "2O26-12-02", false, ""},
		{UnitDay, "yyyy-MM-dd", "", false, ""},
		{UnitDay, "uuuu-MM-dd", "0000-12-02", false, "year 0 (1 BC), which Fluss's 'u' reads"},
		{UnitDay, "uuuu-MM-dd", "-2026-12-02", false, "a negative year, as above"},
		{UnitDay, "yyyyLLdd", "20261202", true, ""},
		{UnitDay, "'d'yyyyMMdd", "d20261202", true, ""},
		{UnitDay, "'d'yyyyMMdd", "D20261202", false, ""},
		{UnitDay, "'d'yyyyMMdd", "20261202", false, ""},
		{UnitDay, "yyyy-MM-dd'T'", "2026-12-02T", true, ""},
		{UnitDay, "yyyy-MM-dd'T'", "2026-12-02", false, ""},
		{UnitHour, "yyyyMMdd-HH", "20261202-07", true, ""},
		{UnitHour, "yyyyMMdd-HH", "20261202-23", true, ""},
		{UnitHour, "yyyyMMdd-HH", "20261202-24", false, "Fluss's SMART parse reads hour 24 as the next midnight"},
		{UnitHour, "yyyyMMdd-HH", "20261202-25", false, ""},
		{UnitHour, "yyyyMMdd-HH", "2026120207", false, ""},
		{UnitHour, "yyyy-MM-dd_HH", "2026-12-02_07", true, ""},
		{UnitQuarter, "yyyy-Q", "2026-4", true, ""},
		{UnitQuarter, "yyyy-Q", "2026-5", false, "without a day field Fluss never range-checks the quarter"},
		{UnitQuarter, "yyyy-Q", "2026-0", false, "as above"},
		{UnitQuarter, "yyyy-Q", "2026-04", false, "Fluss's one-letter Q takes any number of digits"},
		{UnitQuarter, "yyyy'Q'Q", "2026Q4", true, ""},
		{UnitQuarter, "yyyy'Q'Q", "2026q4", false, ""},
		{UnitQuarter, "yyyy-q", "2026-1", true, ""},
		{UnitQuarter, "yyyyQ", "20264", true, "Fluss cannot parse its own QUARTER default: the year takes every digit"},
		{UnitQuarter, "yyyyQ", "20265", false, ""},
		{UnitMonth, "yyyy_MM", "2026_12", true, ""},
		{UnitMonth, "yyyy_MM", "2026_13", false, "without a day field Fluss never range-checks the month"},
		{UnitMonth, "yyyy_MM", "2026_00", false, "as above"},
		{UnitMonth, "yyyy_MM", "202612", false, ""},
		{UnitMonth, "yyyyMM", "202612", true, ""},
		{UnitMonth, "yyyyMM", "202613", false, "as above"},
		{UnitYear, "uuuu", "2026", true, ""},
		{UnitYear, "yyyy", "2026", true, ""},
		{UnitYear, "yyyy", "26", false, ""},
		{UnitYear, "yyyy", "12026", false, ""},
		{UnitYear, "'y'yyyy", "y2026", true, ""},
		{UnitDay, "yyyyMMdd", "20261202", true, ""},
		{UnitDay, "yyyyMMdd", "2026-12-02", false, ""},
		{UnitDay, "yyyyMMdd", "20260230", false, "as 2026-02-31"},
		{UnitHour, "yyyyMMddHH", "2026120124", false, "as 20261202-24"},
	}
	for _, c := range cases {
		ap := AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true",
			OptAutoPartitionTimeUnit: string(c.unit), OptAutoPartitionTimeFormat: c.pattern}, "dt"))
		require.True(t, ap.Checked(), "%s %q", c.unit, c.pattern)
		assert.Equal(t, c.pattern, ap.Pattern())
		err := ap.CheckFormat(c.value)
		if c.ok {
			assert.NoError(t, err, "%s %q %q %s", c.unit, c.pattern, c.value, c.note)
			continue
		}
		de := AsError(err)
		require.NotNil(t, de, "%s %q %q %s", c.unit, c.pattern, c.value, c.note)
		assert.Equal(t, KindInvalidArgument, de.Kind)
		assert.Contains(t, de.Message, "`"+c.value+"`")
		assert.Contains(t, de.Message, "format "+c.pattern+" (table.auto-partition.time-format, time-unit "+string(c.unit)+")")
	}
}

// TestAutoPartitionValueTimeFormat: partition values Fluss generates in a
// custom format (PartitionUtils#generateAutoPartitionTime of the same jar,
// at 2026-12-01 08:00 UTC).
func TestAutoPartitionValueTimeFormat(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		unit    AutoPartitionUnit
		pattern string
		offset  int
		want    string
	}{
		{UnitDay, "yyyy-MM-dd", -30, "2026-11-01"}, {UnitDay, "yyyy-MM-dd", 1, "2026-12-02"},
		{UnitHour, "yyyyMMdd-HH", -10, "20261130-22"}, {UnitMonth, "yyyy_MM", -12, "2025_12"},
		{UnitQuarter, "yyyy'Q'Q", 1, "2027Q1"}, {UnitQuarter, "yyyy-Q", -4, "2025-4"},
		{UnitYear, "'y'yyyy", -1, "y2025"}, {UnitDay, "'d'yyyyMMdd", 0, "d20261201"},
	}
	for _, c := range cases {
		ap := AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true",
			OptAutoPartitionTimeUnit: string(c.unit), OptAutoPartitionTimeFormat: c.pattern}, "dt"))
		got := ap.Value(now, c.offset)
		assert.Equal(t, c.want, got, "%s %q %+d", c.unit, c.pattern, c.offset)
		assert.NoError(t, ap.CheckFormat(got), "a generated value passes the check")
	}
}

func TestAutoPartitionOfTimeFormat(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

	// Auto-partitioning on with a format: the format and the retention.
	ap := AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true", OptAutoPartitionTimeFormat: "yyyy-MM-dd",
		OptAutoPartitionRetention: "30"}, "dt"))
	require.True(t, ap.Enabled)
	require.True(t, ap.Checked())
	assert.Equal(t, UnitDay, ap.Unit, "the default unit")
	assert.Equal(t, "yyyy-MM-dd", ap.Pattern())
	assert.Equal(t, "2026-11-01", ap.EarliestRetained(now))
	assert.NoError(t, ap.CheckFormat("2026-12-01"))
	require.Error(t, ap.CheckRetention("2025-01-01", now))
	err := ap.CheckNewPartition("2025-01-01", now)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "`2026-11-01`")
	assert.Contains(t, err.Error(), "the partition was not created")
	err = ap.CheckNewPartition("20261201", now)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "format yyyy-MM-dd")
	assert.Contains(t, err.Error(), "like `2026-12-01`")

	// Auto-partitioning off with a format: Fluss still checks the format of
	// partitions created by name, but drops nothing.
	ap = AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionTimeUnit: "MONTH", OptAutoPartitionTimeFormat: "yyyy_MM",
		OptAutoPartitionKey: "m"}, "region", "m"))
	require.False(t, ap.Enabled)
	require.True(t, ap.Checked())
	assert.Equal(t, 1, ap.KeyIndex)
	assert.Equal(t, "2020_01", ap.TimeValue("eu$2020_01"))
	assert.NoError(t, ap.CheckNewPartition("2020_01", now), "no retention without auto-partitioning")
	assert.Empty(t, ap.EarliestRetained(now))
	err = ap.CheckFormat("202001")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "format yyyy_MM (table.auto-partition.time-format, time-unit MONTH, auto-partitioning off)")
	assert.Contains(t, err.Error(), "like `2026_12`")
	ap = AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "false", OptAutoPartitionTimeFormat: "yyyy-MM-dd"}, "dt"))
	assert.True(t, ap.Checked())
	assert.Equal(t, "dt", ap.Key, "the first partition key by default")

	// Without a format (every 0.9.1 table): the unit's default.
	ap = AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true", OptAutoPartitionTimeUnit: "HOUR"}, "dt"))
	assert.Equal(t, "yyyyMMddHH", ap.Pattern())
	assert.Empty(t, ap.TimeFormat)
	assert.False(t, AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "false"}, "dt")).Checked())
	assert.False(t, AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionTimeFormat: "yyyy-MM-dd"})).Checked(), "not partitioned")

	// A format the gateway cannot read is not policed (Fluss validated it
	// when the table was created).
	for _, f := range []string{"yyyy-MM", "yyyy/MM/dd", "yyyy-MM-dd'"} {
		ap = AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true", OptAutoPartitionTimeFormat: f}, "dt"))
		assert.False(t, ap.Checked(), "%q", f)
	}

	// The message quotes a long value cut short.
	ap = AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true", OptAutoPartitionTimeFormat: "yyyy-MM-dd"}, "dt"))
	err = ap.CheckFormat(strings.Repeat("é", 200))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 600)
	assert.Contains(t, err.Error(), "…")
}

// FuzzAutoPartitionTimeFormat: any pattern the gateway accepts renders
// every time into a value its own check accepts and that Fluss accepts as
// a partition name; arbitrary values never panic the check.
func FuzzAutoPartitionTimeFormat(f *testing.F) {
	for _, s := range []string{"yyyy-MM-dd", "yyyyMMdd-HH", "yyyy'Q'Q", "yyyy_MM", "'y'uuuu", "yyyy''MM", "yyyy-MM-dd'", "yyyy#MM"} {
		f.Add(s, "2026-12-02", int64(1795000000))
	}
	units := []AutoPartitionUnit{UnitHour, UnitDay, UnitMonth, UnitQuarter, UnitYear}
	f.Fuzz(func(t *testing.T, pattern, value string, sec int64) {
		at := time.Unix(sec%(250*365*86400), 0).UTC() // 1720-2220
		for _, u := range units {
			l, err := compileTimeFormat(pattern, u)
			if err != nil {
				continue
			}
			v := l.format(at)
			if !l.matches(v) {
				t.Fatalf("%s %q: rendered %q fails its own check", u, pattern, v)
			}
			if ValidateNewName("v", v) != nil {
				t.Fatalf("%s %q: rendered %q is not a partition name", u, pattern, v)
			}
			_ = l.matches(value)
		}
	})
}
