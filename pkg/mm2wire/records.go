package mm2wire

// Heartbeat is a record of the heartbeats topic (`heartbeats` on the target cluster). Its key
// (source, target) is the compaction key; its value is a v0 header and the timestamp.
type Heartbeat struct {
	SourceClusterAlias string
	TargetClusterAlias string
	Timestamp          int64 // epoch milliseconds; also the record timestamp
}

// AppendKey appends the heartbeat key: sourceClusterAlias STRING, targetClusterAlias STRING.
// On error dst is returned unchanged.
func (h Heartbeat) AppendKey(dst []byte) ([]byte, error) {
	const rec = "heartbeat key"
	n := len(dst)
	dst, err := appendString(dst, h.SourceClusterAlias, rec, "sourceClusterAlias")
	if err != nil {
		return dst[:n], err
	}
	dst, err = appendString(dst, h.TargetClusterAlias, rec, "targetClusterAlias")
	if err != nil {
		return dst[:n], err
	}
	return dst, nil
}

// AppendValue appends the heartbeat value: version INT16 (0), timestamp INT64.
func (h Heartbeat) AppendValue(dst []byte) []byte {
	dst = appendInt16(dst, Version0)
	return appendInt64(dst, h.Timestamp)
}

// DecodeHeartbeatKey decodes a heartbeat key.
func DecodeHeartbeatKey(key []byte) (source, target string, err error) {
	r := reader{b: key, record: "heartbeat key"}
	if source, err = r.string("sourceClusterAlias"); err != nil {
		return "", "", err
	}
	if target, err = r.string("targetClusterAlias"); err != nil {
		return "", "", err
	}
	return source, target, nil
}

// DecodeHeartbeatValue decodes a heartbeat value of any version with the v0 layout.
func DecodeHeartbeatValue(value []byte) (timestamp int64, err error) {
	r := reader{b: value, record: "heartbeat value"}
	if _, err = r.int16("version"); err != nil {
		return 0, err
	}
	return r.int64("timestamp")
}

// DecodeHeartbeat decodes a heartbeat record, as MM2's Heartbeat.deserializeRecord does.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	ts, err := DecodeHeartbeatValue(value)
	if err != nil {
		return Heartbeat{}, err
	}
	s, t, err := DecodeHeartbeatKey(key)
	if err != nil {
		return Heartbeat{}, err
	}
	return Heartbeat{SourceClusterAlias: s, TargetClusterAlias: t, Timestamp: ts}, nil
}

// Checkpoint is a record of the checkpoints topic (`<S>.checkpoints.internal` on the target):
// a consumer group's source offset translated for the target. Key (group, topic, partition) is
// the compaction key.
type Checkpoint struct {
	Group            string
	Topic            string // the downstream (target-side, renamed) topic
	Partition        int32
	UpstreamOffset   int64 // the group's committed offset on the source
	DownstreamOffset int64 // the translated offset, committable on the target
	Metadata         string
}

// AppendKey appends the checkpoint key: group STRING, topic STRING, partition INT32.
// On error dst is returned unchanged.
func (c Checkpoint) AppendKey(dst []byte) ([]byte, error) {
	const rec = "checkpoint key"
	n := len(dst)
	dst, err := appendString(dst, c.Group, rec, "group")
	if err != nil {
		return dst[:n], err
	}
	dst, err = appendString(dst, c.Topic, rec, "topic")
	if err != nil {
		return dst[:n], err
	}
	return appendInt32(dst, c.Partition), nil
}

// AppendValue appends the checkpoint value: version INT16 (0), upstreamOffset INT64,
// offset INT64, metadata STRING. On error dst is returned unchanged.
func (c Checkpoint) AppendValue(dst []byte) ([]byte, error) {
	n := len(dst)
	dst = appendInt16(dst, Version0)
	dst = appendInt64(dst, c.UpstreamOffset)
	dst = appendInt64(dst, c.DownstreamOffset)
	dst, err := appendString(dst, c.Metadata, "checkpoint value", "metadata")
	if err != nil {
		return dst[:n], err
	}
	return dst, nil
}

// DecodeCheckpointKey decodes a checkpoint key.
func DecodeCheckpointKey(key []byte) (group, topic string, partition int32, err error) {
	r := reader{b: key, record: "checkpoint key"}
	if group, err = r.string("group"); err != nil {
		return "", "", 0, err
	}
	if topic, err = r.string("topic"); err != nil {
		return "", "", 0, err
	}
	if partition, err = r.int32("partition"); err != nil {
		return "", "", 0, err
	}
	return group, topic, partition, nil
}

// DecodeCheckpointValue decodes a checkpoint value of any version with the v0 layout.
func DecodeCheckpointValue(value []byte) (upstream, downstream int64, metadata string, err error) {
	r := reader{b: value, record: "checkpoint value"}
	if _, err = r.int16("version"); err != nil {
		return 0, 0, "", err
	}
	if upstream, err = r.int64("upstreamOffset"); err != nil {
		return 0, 0, "", err
	}
	if downstream, err = r.int64("offset"); err != nil {
		return 0, 0, "", err
	}
	if metadata, err = r.string("metadata"); err != nil {
		return 0, 0, "", err
	}
	return upstream, downstream, metadata, nil
}

// DecodeCheckpoint decodes a checkpoint record, as MM2's Checkpoint.deserializeRecord does.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	up, down, md, err := DecodeCheckpointValue(value)
	if err != nil {
		return Checkpoint{}, err
	}
	g, t, p, err := DecodeCheckpointKey(key)
	if err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{Group: g, Topic: t, Partition: p, UpstreamOffset: up, DownstreamOffset: down, Metadata: md}, nil
}

// OffsetSync is a record of the offset-syncs topic (`mm2-offset-syncs.<C>.internal`): the
// source record at UpstreamOffset of Topic/Partition landed at DownstreamOffset on the target.
type OffsetSync struct {
	Topic            string // the upstream (source) topic, not renamed
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
}

// AppendKey appends the offset-sync key: topic STRING, partition INT32.
// On error dst is returned unchanged.
func (o OffsetSync) AppendKey(dst []byte) ([]byte, error) {
	n := len(dst)
	dst, err := appendString(dst, o.Topic, "offset-sync key", "topic")
	if err != nil {
		return dst[:n], err
	}
	return appendInt32(dst, o.Partition), nil
}

// AppendValue appends the offset-sync value: upstreamOffset INT64, offset INT64 (no version).
func (o OffsetSync) AppendValue(dst []byte) []byte {
	dst = appendInt64(dst, o.UpstreamOffset)
	return appendInt64(dst, o.DownstreamOffset)
}

// DecodeOffsetSyncKey decodes an offset-sync key.
func DecodeOffsetSyncKey(key []byte) (topic string, partition int32, err error) {
	r := reader{b: key, record: "offset-sync key"}
	if topic, err = r.string("topic"); err != nil {
		return "", 0, err
	}
	if partition, err = r.int32("partition"); err != nil {
		return "", 0, err
	}
	return topic, partition, nil
}

// DecodeOffsetSyncValue decodes an offset-sync value.
func DecodeOffsetSyncValue(value []byte) (upstream, downstream int64, err error) {
	r := reader{b: value, record: "offset-sync value"}
	if upstream, err = r.int64("upstreamOffset"); err != nil {
		return 0, 0, err
	}
	if downstream, err = r.int64("offset"); err != nil {
		return 0, 0, err
	}
	return upstream, downstream, nil
}

// DecodeOffsetSync decodes an offset-sync record, as MM2's OffsetSync.deserializeRecord does.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	t, p, err := DecodeOffsetSyncKey(key)
	if err != nil {
		return OffsetSync{}, err
	}
	up, down, err := DecodeOffsetSyncValue(value)
	if err != nil {
		return OffsetSync{}, err
	}
	return OffsetSync{Topic: t, Partition: p, UpstreamOffset: up, DownstreamOffset: down}, nil
}
