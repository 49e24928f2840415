package mm2wire

// Murmur2 is Kafka's Utils.murmur2: 32-bit MurmurHash2 with seed 0x9747b28c, little-endian
// 4-byte blocks, returning Java's signed int.
func Murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	i := 0
	for ; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch n - i {
	case 3:
		h ^= uint32(data[i+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[i+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[i])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// ToPositive is Kafka's Utils.toPositive: the low 31 bits (not the absolute value).
func ToPositive(v int32) int32 { return v & 0x7fffffff }

// PartitionForKey is the partition the Java producer's default partitioner picks for a non-null
// key (BuiltInPartitioner.partitionForKey): ToPositive(Murmur2(key)) % numPartitions. The
// Connect offsets topic is written this way, so a record for an existing key must go to this
// partition (librdkafka: partitioner=murmur2_random). numPartitions must be positive; it panics
// otherwise, like an integer division by zero.
func PartitionForKey(key []byte, numPartitions int32) int32 {
	if numPartitions <= 0 {
		panic("mm2wire: PartitionForKey: numPartitions must be positive")
	}
	return ToPositive(Murmur2(key)) % numPartitions
}
