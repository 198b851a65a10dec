package domain

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Fluss table options of auto-partitioning (apache/fluss:
// config/ConfigOptions TABLE_AUTO_PARTITION_*). OptAutoPartitionTimeFormat
// exists from Fluss 1.0 on (apache/fluss PR #3558, at 545c553); a 0.9.1
// server refuses it as an unknown table option, so its tables never carry it.
const (
	OptAutoPartitionEnabled    = "table.auto-partition.enabled"
	OptAutoPartitionKey        = "table.auto-partition.key"
	OptAutoPartitionTimeUnit   = "table.auto-partition.time-unit"
	OptAutoPartitionTimeFormat = "table.auto-partition.time-format"
	OptAutoPartitionTimeZone   = "table.auto-partition.time-zone"
	OptAutoPartitionRetention  = "table.auto-partition.num-retention"
)

// AutoPartitionUnit is a Fluss auto-partition time unit
// (apache/fluss: config/AutoPartitionTimeUnit).
type AutoPartitionUnit string

// The time units and the partition-value formats Fluss names their
// partitions with by default (apache/fluss: utils/PartitionUtils
// #getPartitionTimeFormat, java.time.format.DateTimeFormatter patterns):
// HOUR yyyyMMddHH, DAY yyyyMMdd, MONTH yyyyMM, QUARTER yyyyQ (the year and
// the quarter digit 1-4, e.g. 20264), YEAR yyyy. From Fluss 1.0 on a table
// may name another pattern in table.auto-partition.time-format.
const (
	UnitHour    AutoPartitionUnit = "HOUR"
	UnitDay     AutoPartitionUnit = "DAY"
	UnitMonth   AutoPartitionUnit = "MONTH"
	UnitQuarter AutoPartitionUnit = "QUARTER"
	UnitYear    AutoPartitionUnit = "YEAR"
)

// Format is the Java DateTimeFormatter pattern of the unit's partition values
// when the table sets no table.auto-partition.time-format.
func (u AutoPartitionUnit) Format() string {
	switch u {
	case UnitHour:
		return "yyyyMMddHH"
	case UnitDay:
		return "yyyyMMdd"
	case UnitMonth:
		return "yyyyMM"
	case UnitQuarter:
		return "yyyyQ"
	default:
		return "yyyy"
	}
}

// AutoPartition is the auto-partition strategy of a table, as Fluss reads it
// from the table's properties (apache/fluss: utils/AutoPartitionStrategy).
// Fluss's coordinator creates the partitions of the current and the next
// time units and, every auto-partition.check.interval, drops the partitions
// whose time value sorts before the value of now minus Retention units
// (apache/fluss: server/coordinator/AutoPartitionManager#dropPartitions,
// a string comparison). Newer Fluss clients and the 1.0 coordinator refuse
// to create a partition with a malformed or out-of-date time value
// (apache/fluss: utils/PartitionUtils#validateAutoPartitionTime); this
// type gives the gateway the same rule. A table with auto-partitioning off
// but a table.auto-partition.time-format keeps the format rule without the
// retention (Checked reports it, Enabled is false).
type AutoPartition struct {
	// Enabled is table.auto-partition.enabled: Fluss creates and drops the
	// table's partitions, so the retention applies.
	Enabled bool
	// Key is the partition key holding the time value; KeyIndex its
	// position among the partition keys.
	Key      string
	KeyIndex int
	Unit     AutoPartitionUnit
	// TimeFormat is the table's table.auto-partition.time-format (Fluss
	// 1.0), "" when it uses the unit's default pattern (Unit.Format). Only
	// AutoPartitionOf compiles it: a value built otherwise uses the unit's
	// default whatever TimeFormat says.
	TimeFormat string
	// Retention is the number of past units kept; negative keeps all.
	Retention int
	// Zone is the time zone partition values are computed in. Fluss's
	// default is the server's system zone; the gateway, which cannot know
	// it, uses UTC when the table does not set
	// table.auto-partition.time-zone.
	Zone *time.Location

	// layout is TimeFormat compiled; nil when TimeFormat is "".
	layout timeLayout
}

// AutoPartitionOf reads the auto-partition strategy of a table from its
// properties and partition keys. Checked is false for tables without
// auto-partitioning or a time format, and for options the gateway cannot
// read, which it then does not police: Fluss validated them when the table
// was created (a time format outside the grammar of compileTimeFormat
// included).
func AutoPartitionOf(d TableDescriptor) AutoPartition {
	p := d.Properties
	if len(d.PartitionKeys) == 0 {
		return AutoPartition{}
	}
	enabled := strings.EqualFold(strings.TrimSpace(p[OptAutoPartitionEnabled]), "true")
	format := p[OptAutoPartitionTimeFormat]
	if !enabled && format == "" {
		return AutoPartition{}
	}
	ap := AutoPartition{Enabled: enabled, Unit: UnitDay, Retention: 7, Zone: time.UTC, TimeFormat: format}
	ap.Key = d.PartitionKeys[0]
	if k := strings.TrimSpace(p[OptAutoPartitionKey]); k != "" {
		ap.Key = k
	}
	ap.KeyIndex = -1
	for i, k := range d.PartitionKeys {
		if k == ap.Key {
			ap.KeyIndex = i
		}
	}
	if ap.KeyIndex < 0 {
		return AutoPartition{}
	}
	if u := strings.ToUpper(strings.TrimSpace(p[OptAutoPartitionTimeUnit])); u != "" {
		switch AutoPartitionUnit(u) {
		case UnitHour, UnitDay, UnitMonth, UnitQuarter, UnitYear:
			ap.Unit = AutoPartitionUnit(u)
		default:
			return AutoPartition{}
		}
	}
	if r := strings.TrimSpace(p[OptAutoPartitionRetention]); r != "" {
		n, err := strconv.Atoi(r)
		if err != nil {
			return AutoPartition{}
		}
		ap.Retention = n
	}
	if z := strings.TrimSpace(p[OptAutoPartitionTimeZone]); z != "" {
		if loc, err := time.LoadLocation(z); err == nil {
			ap.Zone = loc
		}
	}
	if format != "" {
		l, err := compileTimeFormat(format, ap.Unit)
		if err != nil {
			return AutoPartition{}
		}
		ap.layout = l
	}
	return ap
}

// Checked reports whether partition time values are checked at all:
// auto-partitioning is on, or the table sets a time format, which Fluss
// keeps checking for partitions created by name when auto-partitioning is
// off (apache/fluss: PartitionUtils#validateAutoPartitionTime at 545c553).
func (a AutoPartition) Checked() bool { return a.Enabled || a.layout != nil }

// Pattern is the pattern of the table's partition time values:
// table.auto-partition.time-format, or the unit's default.
func (a AutoPartition) Pattern() string {
	if a.layout != nil {
		return a.TimeFormat
	}
	return a.Unit.Format()
}

func (a AutoPartition) timeLayout() timeLayout {
	if a.layout != nil {
		return a.layout
	}
	return defaultLayouts[a.Unit]
}

// Value renders t shifted by offset units as the table's partition value
// (apache/fluss: PartitionUtils#generateAutoPartitionTime): the shift is in
// the unit, the rendering in Pattern.
func (a AutoPartition) Value(t time.Time, offset int) string {
	t = t.In(a.Zone)
	switch a.Unit {
	case UnitHour:
		t = t.Add(time.Duration(offset) * time.Hour)
	case UnitDay:
		t = t.AddDate(0, 0, offset)
	case UnitMonth:
		t = addMonths(t, offset)
	case UnitQuarter:
		t = addMonths(t, 3*offset)
	default:
		t = t.AddDate(offset, 0, 0)
	}
	return a.timeLayout().format(t)
}

// addMonths adds n months as java.time's plusMonths does: the day is
// clamped to the last day of the target month.
func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location()).AddDate(0, n, 0)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// CheckFormat reports whether value is a partition value Fluss's
// auto-partitioning could name for this table: Pattern applied to a real
// time (a four-digit year from 0001, a month 01-12, a day of that month, an
// hour 00-23, a quarter 1-4), literals as the pattern spells them.
//
// Fluss's own check parses value with java.time's DateTimeFormatter in its
// default SMART mode (apache/fluss: PartitionUtils#isValidPartitionTime),
// which also lets through a few values no time renders to: a day past the
// month's end (`20260231`), hour 24, month 00 or 13 in a pattern without a
// day, years of five or more digits after a `+`. The gateway refuses those.
// Conversely Java cannot parse the QUARTER default `yyyyQ` at all (its
// quarter field has no fixed width, so the year takes every digit) and a
// 1.0 coordinator refuses to create such partitions by name; the gateway
// accepts the values Fluss's auto-partitioning itself creates (`20264`).
func (a AutoPartition) CheckFormat(value string) error {
	if a.timeLayout().matches(value) {
		return nil
	}
	source := "table.auto-partition.time-unit " + string(a.Unit)
	if a.layout != nil {
		source = "table.auto-partition.time-format, time-unit " + string(a.Unit)
	}
	example := a.Value(time.Date(2026, 12, 1, 8, 0, 0, 0, a.Zone), 0)
	if !a.Enabled {
		return InvalidArgument("partition value `%s` of column `%s` does not match the table's auto-partition format %s "+
			"(%s, auto-partitioning off); Fluss creates this table's partitions only with values like `%s`; the entry was not written",
			cutValue(value), a.Key, a.Pattern(), source, example)
	}
	return InvalidArgument("partition value `%s` of column `%s` does not match the table's auto-partition format %s "+
		"(%s); Fluss names this table's partitions like `%s` and its retention compares "+
		"names as text, so a partition named otherwise may be dropped with its rows at its next check; the entry was not written",
		cutValue(value), a.Key, a.Pattern(), source, example)
}

// cutValue shortens a quoted user value for an error message.
func cutValue(v string) string {
	keep := 64
	if len(v) <= keep {
		return v
	}
	for keep > 0 && !utf8.RuneStart(v[keep]) {
		keep--
	}
	return v[:keep] + "…"
}

// EarliestRetained is the smallest time value Fluss keeps at now, or "" when
// the table keeps every partition (a negative retention, or auto-partitioning
// off).
func (a AutoPartition) EarliestRetained(now time.Time) string {
	if !a.Enabled || a.Retention < 0 {
		return ""
	}
	return a.Value(now, -a.Retention)
}

// CheckRetention reports whether a partition with time value value
// (already of the right format) would survive Fluss's next retention check
// at now: a partition created for an older value is dropped, with its rows,
// within auto-partition.check.interval.
func (a AutoPartition) CheckRetention(value string, now time.Time) error {
	earliest := a.EarliestRetained(now)
	if earliest == "" || value >= earliest {
		return nil
	}
	return InvalidArgument("partition value `%s` of column `%s` is older than the table's retention "+
		"(table.auto-partition.num-retention %d, time-unit %s: the earliest retained partition is `%s`); "+
		"Fluss would drop the partition and its rows at its next auto-partition check, so the entry was not written",
		value, a.Key, a.Retention, a.Unit, earliest)
}

// TimeValue returns the auto-partition key's value in a partition name.
func (a AutoPartition) TimeValue(partitionName string) string {
	if a.KeyIndex == 0 && !strings.Contains(partitionName, PartitionNameSeparator) {
		return partitionName
	}
	parts := strings.Split(partitionName, PartitionNameSeparator)
	if a.KeyIndex < len(parts) {
		return parts[a.KeyIndex]
	}
	return ""
}

// CheckNewPartition applies the rule writes follow (CheckFormat, then
// CheckRetention at now) to a partition about to be created by name (POST
// .../partitions): value is the auto-partition key's value of the new
// partition. The messages end with "the partition was not created".
func (a AutoPartition) CheckNewPartition(value string, now time.Time) error {
	err := a.CheckFormat(value)
	if err == nil {
		err = a.CheckRetention(value, now)
	}
	if de := AsError(err); de != nil {
		cp := *de
		cp.Message = strings.Replace(cp.Message, "the entry was not written", "the partition was not created", 1)
		cp.Message = strings.Replace(cp.Message, "so the entry was not written", "so the partition was not created", 1)
		return &cp
	}
	return err
}
