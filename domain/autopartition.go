package domain

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Fluss table options of auto-partitioning (apache/fluss:
// config/ConfigOptions TABLE_AUTO_PARTITION_*).
const (
	OptAutoPartitionEnabled   = "table.auto-partition.enabled"
	OptAutoPartitionKey       = "table.auto-partition.key"
	OptAutoPartitionTimeUnit  = "table.auto-partition.time-unit"
	OptAutoPartitionTimeZone  = "table.auto-partition.time-zone"
	OptAutoPartitionRetention = "table.auto-partition.num-retention"
)

// AutoPartitionUnit is a Fluss auto-partition time unit
// (apache/fluss: config/AutoPartitionTimeUnit).
type AutoPartitionUnit string

// The time units and the partition-value formats Fluss names their
// partitions with (apache/fluss: utils/PartitionUtils#generateAutoPartitionTime,
// java.time.format.DateTimeFormatter patterns): HOUR yyyyMMddHH, DAY
// yyyyMMdd, MONTH yyyyMM, QUARTER yyyyQ (the year and the quarter digit 1-4,
// e.g. 20264), YEAR yyyy.
const (
	UnitHour    AutoPartitionUnit = "HOUR"
	UnitDay     AutoPartitionUnit = "DAY"
	UnitMonth   AutoPartitionUnit = "MONTH"
	UnitQuarter AutoPartitionUnit = "QUARTER"
	UnitYear    AutoPartitionUnit = "YEAR"
)

// Format is the Java DateTimeFormatter pattern of the unit's partition values.
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
// a string comparison). Newer Fluss clients refuse to create a partition
// with a malformed or out-of-date time value before asking the server
// (apache/fluss: utils/PartitionUtils#validateAutoPartitionTime); this
// type gives the gateway the same rule.
type AutoPartition struct {
	Enabled bool
	// Key is the partition key holding the time value; KeyIndex its
	// position among the partition keys.
	Key      string
	KeyIndex int
	Unit     AutoPartitionUnit
	// Retention is the number of past units kept; negative keeps all.
	Retention int
	// Zone is the time zone partition values are computed in. Fluss's
	// default is the server's system zone; the gateway, which cannot know
	// it, uses UTC when the table does not set
	// table.auto-partition.time-zone.
	Zone *time.Location
}

// AutoPartitionOf reads the auto-partition strategy of a table from its
// properties and partition keys; Enabled is false for tables without it
// (and for options the gateway cannot read, which it then does not police:
// Fluss validated them when the table was created).
func AutoPartitionOf(d TableDescriptor) AutoPartition {
	p := d.Properties
	if len(d.PartitionKeys) == 0 || !strings.EqualFold(strings.TrimSpace(p[OptAutoPartitionEnabled]), "true") {
		return AutoPartition{}
	}
	ap := AutoPartition{Enabled: true, Unit: UnitDay, Retention: 7, Zone: time.UTC}
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
	return ap
}

// Value renders t shifted by offset units as the unit's partition value
// (apache/fluss: PartitionUtils#generateAutoPartitionTime).
func (a AutoPartition) Value(t time.Time, offset int) string {
	t = t.In(a.Zone)
	switch a.Unit {
	case UnitHour:
		t = t.Add(time.Duration(offset) * time.Hour)
		return t.Format("2006010215")
	case UnitDay:
		return t.AddDate(0, 0, offset).Format("20060102")
	case UnitMonth:
		return addMonths(t, offset).Format("200601")
	case UnitQuarter:
		t = addMonths(t, 3*offset)
		return fmt.Sprintf("%04d%d", t.Year(), (int(t.Month())-1)/3+1)
	default:
		return fmt.Sprintf("%04d", t.AddDate(offset, 0, 0).Year())
	}
}

// addMonths adds n months as java.time's plusMonths does: the day is
// clamped to the last day of the target month.
func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location()).AddDate(0, n, 0)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// CheckFormat reports whether value has the unit's form: digits only, a
// four-digit year, a real calendar date and hour.
func (a AutoPartition) CheckFormat(value string) error {
	bad := func(example string) error {
		return InvalidArgument("partition value `%s` of column `%s` does not match the table's auto-partition format %s "+
			"(table.auto-partition.time-unit %s); Fluss names this table's partitions like `%s` and its retention compares "+
			"names as text, so a partition named otherwise may be dropped with its rows at its next check; the entry was not written",
			value, a.Key, a.Unit.Format(), a.Unit, example)
	}
	example := a.Value(time.Date(2026, 12, 1, 8, 0, 0, 0, a.Zone), 0)
	if len(value) != len(a.Unit.Format()) {
		return bad(example)
	}
	if a.Unit == UnitQuarter {
		if !allDigits(value) || value[4] < '1' || value[4] > '4' {
			return bad(example)
		}
		return nil
	}
	if !allDigits(value) {
		return bad(example)
	}
	layout := map[AutoPartitionUnit]string{UnitHour: "2006010215", UnitDay: "20060102", UnitMonth: "200601", UnitYear: "2006"}[a.Unit]
	if _, err := time.Parse(layout, value); err != nil {
		return bad(example)
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// EarliestRetained is the smallest time value Fluss keeps at now, or "" when
// the table keeps every partition.
func (a AutoPartition) EarliestRetained(now time.Time) string {
	if a.Retention < 0 {
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
