package rdkafka

// The C digest of scan.c for the external tests.
var (
	RecordDigestC = recordDigestC
	XXH64C        = xxh64C
)
