package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func autoDesc(props map[string]string, keys ...string) TableDescriptor {
	return TableDescriptor{PartitionKeys: keys, Properties: props}
}

func TestAutoPartitionOf(t *testing.T) {
	t.Parallel()
	none := AutoPartitionOf(autoDesc(map[string]string{}, "dt"))
	assert.False(t, none.Enabled)
	assert.False(t, AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true"})).Enabled, "not partitioned")

	ap := AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true"}, "dt"))
	require.True(t, ap.Enabled)
	assert.Equal(t, UnitDay, ap.Unit, "Fluss's default unit")
	assert.Equal(t, 7, ap.Retention, "Fluss's default retention")
	assert.Equal(t, "dt", ap.Key)

	ap = AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "TRUE", OptAutoPartitionTimeUnit: "hour",
		OptAutoPartitionRetention: "1", OptAutoPartitionKey: "dt", OptAutoPartitionTimeZone: "Asia/Shanghai"}, "region", "dt"))
	require.True(t, ap.Enabled)
	assert.Equal(t, UnitHour, ap.Unit)
	assert.Equal(t, 1, ap.KeyIndex)
	assert.Equal(t, "Asia/Shanghai", ap.Zone.String())
	assert.Equal(t, "2026120108", ap.TimeValue("eu$2026120108"))

	assert.False(t, AutoPartitionOf(autoDesc(map[string]string{OptAutoPartitionEnabled: "true", OptAutoPartitionKey: "nope"}, "dt")).Enabled)
}

func TestAutoPartitionValue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	cases := []struct {
		unit   AutoPartitionUnit
		offset int
		want   string
	}{
		{UnitDay, 0, "20261201"}, {UnitDay, -30, "20261101"}, {UnitDay, 1, "20261202"},
		{UnitHour, 0, "2026120109"}, {UnitHour, -10, "2026113023"},
		{UnitMonth, -12, "202512"}, {UnitQuarter, 0, "20264"}, {UnitQuarter, -1, "20263"}, {UnitQuarter, 1, "20271"},
		{UnitYear, -1, "2025"},
	}
	for _, c := range cases {
		ap := AutoPartition{Enabled: true, Unit: c.unit, Zone: time.UTC}
		assert.Equal(t, c.want, ap.Value(now, c.offset), "%s %+d", c.unit, c.offset)
	}
	// java.time's plusMonths clamps the day.
	ap := AutoPartition{Unit: UnitMonth, Zone: time.UTC}
	assert.Equal(t, "202602", ap.Value(time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC), -1))
	// the zone decides the day.
	sh, err := time.LoadLocation("Asia/Shanghai")
	require.NoError(t, err)
	ap = AutoPartition{Unit: UnitDay, Zone: sh}
	assert.Equal(t, "20261202", ap.Value(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC), 0))
}

func TestAutoPartitionCheckFormat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		unit  AutoPartitionUnit
		value string
		ok    bool
	}{
		{UnitDay, "20261201", true}, {UnitDay, "2026-12-01", false}, {UnitDay, "20261301", false},
		{UnitDay, "20260230", false}, {UnitDay, "2026120", false}, {UnitDay, "2026120a", false},
		{UnitHour, "2026120123", true}, {UnitHour, "2026120124", false},
		{UnitMonth, "202612", true}, {UnitMonth, "202613", false},
		{UnitQuarter, "20264", true}, {UnitQuarter, "20265", false}, {UnitQuarter, "2026Q4", false},
		{UnitYear, "2026", true}, {UnitYear, "26", false},
	}
	for _, c := range cases {
		ap := AutoPartition{Enabled: true, Key: "dt", Unit: c.unit, Zone: time.UTC}
		err := ap.CheckFormat(c.value)
		if c.ok {
			assert.NoError(t, err, "%s %s", c.unit, c.value)
			continue
		}
		de := AsError(err)
		require.NotNil(t, de, "%s %s", c.unit, c.value)
		assert.Equal(t, KindInvalidArgument, de.Kind)
		assert.Contains(t, de.Message, "`"+c.value+"`")
		assert.Contains(t, de.Message, c.unit.Format())
	}
}

func TestAutoPartitionCheckRetention(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	ap := AutoPartition{Enabled: true, Key: "dt", Unit: UnitDay, Retention: 30, Zone: time.UTC}
	assert.Equal(t, "20261101", ap.EarliestRetained(now))
	assert.NoError(t, ap.CheckRetention("20261101", now))
	assert.NoError(t, ap.CheckRetention("20261201", now))
	assert.NoError(t, ap.CheckRetention("20301201", now), "Fluss sets no bound on future partitions")
	err := ap.CheckRetention("20250101", now)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "`20250101`")
	assert.Contains(t, err.Error(), "`20261101`")
	ap.Retention = -1
	assert.NoError(t, ap.CheckRetention("19700101", now), "negative retention keeps every partition")
}
