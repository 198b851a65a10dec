package arrowlog

import (
	"strconv"
	"strings"
)

// Compression is the Arrow body-compression codec of an ARROW log table, the
// value of `table.log.arrow.compression.type`
// (compression/ArrowCompressionType.java at v0.9.1-incubating: NONE,
// LZ4_FRAME, ZSTD; no other codec exists in 0.9.1).
type Compression uint8

// The codecs Fluss 0.9.1 knows.
const (
	CompressionNone     Compression = iota // NONE: no BodyCompression in the message
	CompressionLZ4Frame                    // LZ4_FRAME: Arrow CompressionType.LZ4_FRAME (0)
	CompressionZstd                        // ZSTD: Arrow CompressionType.ZSTD (1)
)

// Table option names and defaults (config/ConfigOptions.java).
const (
	PropCompressionType = "table.log.arrow.compression.type"
	PropZstdLevel       = "table.log.arrow.compression.zstd.level"

	// DefaultCompression is the default of PropCompressionType.
	DefaultCompression = CompressionZstd
	// DefaultZstdLevel is the default of PropZstdLevel
	// (ArrowCompressionInfo.DEFAULT_COMPRESSION, ZstdArrowCompressionCodec).
	DefaultZstdLevel = 3
	// MinZstdLevel and MaxZstdLevel bound PropZstdLevel
	// (ArrowCompressionInfo.fromConf).
	MinZstdLevel = 1
	MaxZstdLevel = 22
)

// String returns the Fluss spelling (NONE, LZ4_FRAME, ZSTD).
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "NONE"
	case CompressionLZ4Frame:
		return "LZ4_FRAME"
	case CompressionZstd:
		return "ZSTD"
	default:
		return "UNKNOWN(" + strconv.Itoa(int(c)) + ")"
	}
}

// ParseCompression parses `table.log.arrow.compression.type`
// case-insensitively (Fluss parses enum options that way). An empty value
// is the default, ZSTD.
func ParseCompression(s string) (Compression, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "":
		return DefaultCompression, nil
	case "NONE":
		return CompressionNone, nil
	case "LZ4_FRAME":
		return CompressionLZ4Frame, nil
	case "ZSTD":
		return CompressionZstd, nil
	default:
		return 0, unsupported("arrow compression type %q (Fluss 0.9.1 knows NONE, LZ4_FRAME, ZSTD)", s)
	}
}

// CompressionFromProperties reads the codec and ZSTD level of a table from
// its properties, applying Fluss's defaults and its level check
// (ArrowCompressionInfo.fromConf): the level is only read, and only checked
// against 1..22, for ZSTD; it is 0 for the other codecs.
func CompressionFromProperties(props map[string]string) (Compression, int, error) {
	codec, err := ParseCompression(props[PropCompressionType])
	if err != nil {
		return 0, 0, err
	}
	if codec != CompressionZstd {
		return codec, 0, nil
	}
	level := DefaultZstdLevel
	if v := strings.TrimSpace(props[PropZstdLevel]); v != "" {
		if level, err = strconv.Atoi(v); err != nil {
			return 0, 0, invalidArg("%s = %q is not an integer", PropZstdLevel, v)
		}
	}
	if err := checkLevel(codec, level); err != nil {
		return 0, 0, err
	}
	return codec, level, nil
}

func checkLevel(codec Compression, level int) error {
	if codec == CompressionZstd && (level < MinZstdLevel || level > MaxZstdLevel) {
		return invalidArg("invalid ZSTD compression level %d, expected %d..%d", level, MinZstdLevel, MaxZstdLevel)
	}
	return nil
}
