package arrowlog

// Regression vectors for TestJavaBodyGolden: the NONE-codec message for
// columns (a INTEGER, b STRING) and rows (1, "a"), (null, "bc"), (3, null)
// as this package builds it with arrow-go v18.8.0, and its V0 log batch
// header (schema id 1, writer id -1, batch sequence -1).
//
// Layout: ff ff ff ff | c8 00 00 00 (metadata length 200) | 200 bytes of
// flatbuffer Message (V5, RecordBatch: length 3, nodes (3,1) (3,1), buffers
// (0,4) (8,12) (24,4) (32,16) (48,3), no compression, bodyLength 56) | the
// 56-byte body of TestJavaBodyGolden.
const goldenMessageHex = `
	ff ff ff ff c8 00 00 00 14 00 00 00 00 00 00 00
	0c 00 16 00 14 00 13 00 0c 00 04 00 0c 00 00 00
	38 00 00 00 00 00 00 00 14 00 00 00 00 00 00 03
	04 00 0a 00 18 00 0c 00 08 00 04 00 0a 00 00 00
	14 00 00 00 68 00 00 00 03 00 00 00 00 00 00 00
	00 00 00 00 05 00 00 00 00 00 00 00 00 00 00 00
	04 00 00 00 00 00 00 00 08 00 00 00 00 00 00 00
	0c 00 00 00 00 00 00 00 18 00 00 00 00 00 00 00
	04 00 00 00 00 00 00 00 20 00 00 00 00 00 00 00
	10 00 00 00 00 00 00 00 30 00 00 00 00 00 00 00
	03 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00
	03 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
	03 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
	05 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
	03 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00
	00 00 00 00 01 00 00 00 03 00 00 00 03 00 00 00
	61 62 63 00 00 00 00 00`

// 0 baseOffset | 300 length | 0 magic | 0 commitTimestamp | crc | schema id 1 |
// attributes 01 (append-only) | lastOffsetDelta 2 | writer id -1 |
// batch sequence -1 | record count 3.
const goldenLogBatchHeaderHex = `
	00 00 00 00 00 00 00 00 | 2c 01 00 00 | 00 | 00 00 00 00 00 00 00 00 | 8e 2e 61 ea | 01 00 | 01 |
	02 00 00 00 | ff ff ff ff ff ff ff ff | ff ff ff ff | 03 00 00 00`
